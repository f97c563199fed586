"""Task rows: each archive hashes to ``archive_sha256``, holds exactly its ``files``
manifest in the deterministic format, and re-packs from ``tasks/<task_id>/``: it is
gzipped as TermGrade packs (one member, the same header) around the very tar stream,
byte for byte, that the tree packs to. The deflate bytes are not compared: they differ
between zlib builds at the same level, and inflating is ~10x cheaper than deflating at
level 9. The tree holds no other tasks, and ``registry.json`` lists exactly the tree
(Harbor's ``DatasetSpec`` format)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from termgrade.builders.kinds import row_kinds
from termgrade.builders.layout import RepoPaths
from termgrade.pools.processes import map_in_workers
from termgrade.records.arrow import schema_name
from termgrade.task.archive import gunzip_packed, gzipped_as_packed, list_archive, tar_tree
from termgrade.task.digest import FileEntry, TaskTree, manifest_digest, read_tree, task_manifest
from termgrade.validate.cache import ValidationCache
from termgrade.validate.findings import ValidationFinding, ValidationReport

if TYPE_CHECKING:
    from termgrade.validate.rows_check import SplitInfo



def task_schemas() -> frozenset[str]:
    """The row schemas whose rows carry task archives (the repo kinds' ``archives`` rows)."""
    return frozenset(schema_name(row.resolve_model()) for row in row_kinds() if row.archives)

_COLUMNS = ["task_id", "files", "archive", "archive_sha256", "task_digest"]


def _read(tree_dir: Path) -> TaskTree | None:
    if not tree_dir.is_dir():
        return None
    try:
        return read_tree(tree_dir)
    except (OSError, ValueError):
        return None


def _row_passes(row: dict[str, Any], tree: TaskTree, archive_digest: str) -> bool:
    """Whether the row passes every check of :func:`_row_findings`, from one read of its
    tree: the archive hashes right, the digest matches the manifest, and the tree has
    that manifest and packs to the tar stream the archive holds, gzipped as TermGrade
    gzips. Nothing more is needed: such an archive is in the format and lists exactly the
    tree's files."""
    if archive_digest != row["archive_sha256"]:
        return False
    manifest = [FileEntry(**f) for f in row["files"]]
    if manifest_digest(manifest) != row["task_digest"]:
        return False
    return tree.manifest() == manifest and _repacks(tree, row["archive"])


def _repacks(tree: TaskTree, archive: bytes) -> bool:
    raw = tar_tree(tree)
    return gunzip_packed(archive, max_bytes=len(raw)) == raw


def row_key(row: dict[str, Any], tree: TaskTree, archive_digest: str) -> str:
    """The cache key of a row's pass: its archive and manifest columns and its tree's
    contents (``archive:<row>:<tree>:<task id>``)."""
    fields = json.dumps([row["task_id"], archive_digest,
                         row["archive_sha256"], row["task_digest"], row["files"]],
                        sort_keys=True)
    return (f"archive:{hashlib.sha256(fields.encode()).hexdigest()}:{tree.fingerprint()}:"
            f"{row['task_id']}")


@dataclasses.dataclass
class RowResult:
    findings: list[ValidationFinding]
    passed: str | None = None
    """The row's cache key when it passed."""
    recalled: bool = False
    """Passed because the key was cached (nothing was re-packed)."""


def check_row(paths: RepoPaths, rel: str, index: int, row: dict[str, Any],
              cached: set[str] | frozenset[str] = frozenset()) -> RowResult:
    """One task row, from one read of its tree; a pass whose key is in ``cached`` (the
    same row columns and tree contents passed before) is not re-packed."""
    tree = _read(paths.task_dir(row["task_id"]))
    if tree is not None:
        digest = hashlib.sha256(row["archive"]).hexdigest()  # once: key and check
        key = row_key(row, tree, digest)
        if key in cached:
            return RowResult([], key, recalled=True)
        if _row_passes(row, tree, digest):
            return RowResult([], key)
    return RowResult(_row_findings(paths, rel, index, row))


def _row_findings(paths: RepoPaths, rel: str, index: int,
                  row: dict[str, Any]) -> list[ValidationFinding]:
    """Each thing wrong with a row that did not pass, named."""
    report = ValidationReport(root=str(paths.root))
    task_id = row["task_id"]
    archive: bytes = row["archive"]
    if hashlib.sha256(archive).hexdigest() != row["archive_sha256"]:
        report.add(ValidationFinding("archive", rel, "archive does not hash to archive_sha256",
                           row=index, field="archive_sha256"))
    listing = list_archive(archive)
    for problem in listing.problems:
        report.add(ValidationFinding(
            "archive", rel, f"{task_id}: {problem}", row=index, field="archive"))
    manifest = [FileEntry(**f) for f in row["files"]]
    by_path = {e.path: e for e in listing.files}
    for entry in manifest:
        got = by_path.pop(entry.path, None)
        if got != entry:
            report.add(ValidationFinding(
                "archive", rel, f"{task_id}: {entry.path} in the manifest is "
                f"{'missing from' if got is None else 'different in'} the archive",
                row=index, field="files"))
    for extra in by_path:
        report.add(ValidationFinding(
            "archive", rel, f"{task_id}: {extra} is in the archive but not the "
            "manifest", row=index, field="files"))
    if manifest_digest(manifest) != row["task_digest"]:
        report.add(ValidationFinding(
            "archive", rel, f"{task_id}: task_digest does not match the files",
            row=index, field="task_digest"))
    tree = paths.task_dir(task_id)
    if not tree.is_dir():
        report.add(ValidationFinding(
            "archive", paths.rel(tree), f"missing: row {index} of {rel} has no "
            "task tree"))
    elif task_manifest(tree) != manifest:
        report.add(ValidationFinding(
            "archive", paths.rel(tree), f"differs from the manifest of row "
            f"{index} of {rel}"))
    elif not gzipped_as_packed(archive):
        report.add(ValidationFinding("archive", rel, f"{task_id}: not gzipped as TermGrade packs "
                           "archives (one member; level 9, no file name, mtime 0)",
                           row=index, field="archive"))
    elif not _repacks(read_tree(tree), archive):
        report.add(ValidationFinding(
            "archive", paths.rel(tree), f"does not re-pack to the archive of "
            f"row {index} of {rel}"))
    return report.findings


PARALLEL_FROM = 200
"""Task rows in a file from which the rows are checked by a process per core."""
_RANGE = 64


def check_row_ranges(items: list[list[Any]]) -> list[dict[str, Any]]:
    """Per ``[repo root, parquet file, first row, stop, cached keys]`` item, its rows'
    findings (as dicts), keys of passes, and keys recalled from the cache; a worker's job
    (:mod:`termgrade.pools.processes`): it reads the rows itself."""
    out = []
    tables: dict[str, pa.Table] = {}  # a file is read once per batch, not per item
    for root, file, first, stop, cached in items:
        paths = RepoPaths(Path(root))
        path = Path(file)
        if file not in tables:
            tables[file] = pq.read_table(path, columns=_COLUMNS)
        table = tables[file].slice(first, stop - first)
        known = frozenset(cached)
        findings: list[dict[str, Any]] = []
        passed: list[str] = []
        recalled: list[str] = []
        for index, row in enumerate(table.to_pylist(), start=first):
            result = check_row(paths, paths.rel(path), index, row, known)
            findings.extend(f.to_dict() for f in result.findings)
            if result.passed is not None:
                (recalled if result.recalled else passed).append(result.passed)
        out.append({"findings": findings, "passed": passed, "recalled": recalled})
    return out


def _cached_by_task(memo: ValidationCache) -> dict[str, list[str]]:
    by_task: dict[str, list[str]] = {}
    for key in memo.passed:
        if key.startswith("archive:"):
            by_task.setdefault(key.split(":", 3)[3], []).append(key)
    return by_task


def _check_file(paths: RepoPaths, path: Path, report: ValidationReport, task_ids: set[str],
                workers: int | None, memo: ValidationCache, used: set[str]) -> None:
    n_rows = pq.ParquetFile(path).metadata.num_rows
    cached = _cached_by_task(memo) if memo.enabled else {}
    ids = [str(t) for t in pq.read_table(path, columns=["task_id"])["task_id"]]
    task_ids.update(ids)
    if workers == 1 or n_rows < PARALLEL_FROM:
        items = [[str(paths.root), str(path), 0, n_rows,
                  [k for t in ids for k in cached.get(t, [])]]]
        results = check_row_ranges(items)
    else:
        items = [[str(paths.root), str(path), first, min(first + _RANGE, n_rows),
                  [k for t in ids[first:first + _RANGE] for k in cached.get(t, [])]]
                 for first in range(0, n_rows, _RANGE)]
        results = map_in_workers("termgrade.validate.archive_check:check_row_ranges", items,
                                 workers=workers, batches_per_worker=1)
    for result in results:
        for finding in result["findings"]:
            report.add(ValidationFinding(**finding))
        for key in result["recalled"]:
            memo.hit(key)
            used.add(key)
        for key in result["passed"]:
            memo.remember(key)
            used.add(key)


def check_archives(paths: RepoPaths, infos: list[SplitInfo], report: ValidationReport, *,
                   workers: int | None = None, memo: ValidationCache | None = None,
                   used: set[str] | None = None) -> set[str]:
    """Check every task row (a file of :data:`PARALLEL_FROM` rows or more by ``workers``
    processes, default :func:`termgrade.pools.processes.default_workers`); return the task ids
    seen. With ``memo``, a row whose columns and tree are unchanged since it passed is not
    re-packed; ``used`` collects the cache keys this run relied on or earned."""
    memo = memo or ValidationCache(paths, enabled=False)
    used = used if used is not None else set()
    before = len(report.findings)
    task_ids: set[str] = set()
    for info in infos:
        if info.row_schema not in task_schemas():
            continue
        for path in info.files:
            _check_file(paths, path, report, task_ids, workers, memo, used)
    if paths.tasks_dir.is_dir():
        for tree in sorted(p for p in paths.tasks_dir.iterdir() if p.is_dir()):
            if tree.name not in task_ids:
                report.add(ValidationFinding("archive", paths.rel(tree), "task tree has no row"))
    if task_ids:
        report.record("archive", f"{len(task_ids)} archives match their manifests and hold, "
                                 "byte for byte, the tar stream tasks/ packs to", before)
    return task_ids


def check_registry(paths: RepoPaths, task_ids: set[str], report: ValidationReport) -> None:
    if not paths.tasks_dir.is_dir():
        return
    before = len(report.findings)
    rel = paths.rel(paths.registry)
    try:
        datasets = json.loads(paths.registry.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        report.add(ValidationFinding("registry", rel, f"not readable: {exc}"))
        return
    if not isinstance(datasets, list):
        report.add(ValidationFinding("registry", rel, "not a list of datasets"))
        return
    listed: set[str] = set()
    for i, spec in enumerate(datasets):
        missing = {"name", "version", "description", "tasks"} - set(spec)
        if missing:
            report.add(ValidationFinding(
                "registry", rel, f"dataset lacks {sorted(missing)}", row=i))
            continue
        for j, task in enumerate(spec["tasks"]):
            path = paths.root / str(task.get("path", ""))
            if not (path / "task.toml").is_file():
                report.add(ValidationFinding("registry", rel, f"{task.get('path')} is no task dir",
                                   row=i, field=f"tasks.{j}.path"))
            listed.add(path.name)
    if listed != task_ids:
        report.add(ValidationFinding("registry", rel, "lists other tasks than the rows: "
                           f"{sorted(listed ^ task_ids)[:5]}"))
    report.record("registry", f"registry.json lists the {len(listed)} task dir(s)", before)
