"""Task rows: each archive hashes to ``archive_sha256``, holds exactly its ``files``
manifest in the deterministic format, re-packs byte for byte from ``tasks/<task_id>/``;
the tree holds no other tasks, and ``registry.json`` lists exactly the tree (Harbor's
``DatasetSpec`` format)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from termgrade.builders.layout import RepoPaths
from termgrade.task.archive import list_archive, pack_task, pack_tree
from termgrade.task.digest import FileEntry, manifest_digest, read_tree, task_manifest
from termgrade.validate.report import Finding, ValidationReport
from termgrade.validate.rows_check import SplitInfo, iter_rows
from termgrade.workers import map_in_workers

TASK_SCHEMAS = frozenset({"env_task_row", "bandcentral_task_row"})
_COLUMNS = ["task_id", "files", "archive", "archive_sha256", "task_digest"]


def _check_row(paths: RepoPaths, rel: str, index: int, row: dict[str, Any],
               report: ValidationReport) -> None:
    for finding in _row_findings(paths, rel, index, row):
        report.add(finding)


def _row_passes(paths: RepoPaths, row: dict[str, Any]) -> bool:
    """Whether the row passes every check of :func:`_row_findings`, from one read of its
    tree: the archive hashes right, the digest matches the manifest, and the tree has
    that manifest and packs to that archive byte for byte. Nothing more is needed: an
    archive :func:`pack_tree` made is in the format and lists exactly the tree's files."""
    archive: bytes = row["archive"]
    if hashlib.sha256(archive).hexdigest() != row["archive_sha256"]:
        return False
    manifest = [FileEntry(**f) for f in row["files"]]
    if manifest_digest(manifest) != row["task_digest"]:
        return False
    tree_dir = paths.task_dir(row["task_id"])
    if not tree_dir.is_dir():
        return False
    try:
        tree = read_tree(tree_dir)
    except (OSError, ValueError):
        return False
    return tree.manifest() == manifest and pack_tree(tree) == archive


def _row_findings(paths: RepoPaths, rel: str, index: int,
                  row: dict[str, Any]) -> list[Finding]:
    if _row_passes(paths, row):
        return []
    report = ValidationReport(root=str(paths.root))
    task_id = row["task_id"]
    archive: bytes = row["archive"]
    if hashlib.sha256(archive).hexdigest() != row["archive_sha256"]:
        report.add(Finding("archive", rel, "archive does not hash to archive_sha256",
                           row=index, field="archive_sha256"))
    listing = list_archive(archive)
    for problem in listing.problems:
        report.add(Finding("archive", rel, f"{task_id}: {problem}", row=index, field="archive"))
    manifest = [FileEntry(**f) for f in row["files"]]
    by_path = {e.path: e for e in listing.files}
    for entry in manifest:
        got = by_path.pop(entry.path, None)
        if got != entry:
            report.add(Finding("archive", rel, f"{task_id}: {entry.path} in the manifest is "
                               f"{'missing from' if got is None else 'different in'} the archive",
                               row=index, field="files"))
    for extra in by_path:
        report.add(Finding("archive", rel, f"{task_id}: {extra} is in the archive but not the "
                                           "manifest", row=index, field="files"))
    if manifest_digest(manifest) != row["task_digest"]:
        report.add(Finding("archive", rel, f"{task_id}: task_digest does not match the files",
                           row=index, field="task_digest"))
    tree = paths.task_dir(task_id)
    if not tree.is_dir():
        report.add(Finding("archive", paths.rel(tree), f"missing: row {index} of {rel} has no "
                                                       "task tree"))
    elif task_manifest(tree) != manifest:
        report.add(Finding("archive", paths.rel(tree), f"differs from the manifest of row "
                                                       f"{index} of {rel}"))
    elif pack_task(tree) != archive:
        report.add(Finding("archive", paths.rel(tree), f"does not re-pack to the archive of "
                                                       f"row {index} of {rel}"))
    return report.findings


PARALLEL_FROM = 200
"""Task rows in a file from which the rows are checked by a process per core."""
_RANGE = 64


def check_row_ranges(items: list[list[Any]]) -> list[list[dict[str, Any]]]:
    """Per ``[repo root, parquet file, first row, stop]`` item, the findings of those
    rows as dicts; a worker's job (:mod:`termgrade.workers`): it reads the rows itself."""
    out = []
    for root, file, first, stop in items:
        paths = RepoPaths(Path(root))
        path = Path(file)
        table = pq.read_table(path, columns=_COLUMNS).slice(first, stop - first)
        out.append([dataclasses.asdict(f)
                    for index, row in enumerate(table.to_pylist(), start=first)
                    for f in _row_findings(paths, paths.rel(path), index, row)])
    return out


def _check_file(paths: RepoPaths, path: Path, report: ValidationReport, task_ids: set[str],
                workers: int | None) -> None:
    rel = paths.rel(path)
    n_rows = pq.ParquetFile(path).metadata.num_rows
    if workers == 1 or n_rows < PARALLEL_FROM:
        for index, row in enumerate(iter_rows(path, _COLUMNS)):
            task_ids.add(row["task_id"])
            _check_row(paths, rel, index, row, report)
        return
    task_ids.update(str(t) for t in pq.read_table(path, columns=["task_id"])["task_id"])
    items = [[str(paths.root), str(path), first, min(first + _RANGE, n_rows)]
             for first in range(0, n_rows, _RANGE)]
    for found in map_in_workers("termgrade.validate.archive_check:check_row_ranges", items,
                                workers=workers):
        for finding in found:
            report.add(Finding(**finding))


def check_archives(paths: RepoPaths, infos: list[SplitInfo], report: ValidationReport, *,
                   workers: int | None = None) -> set[str]:
    """Check every task row (a file of :data:`PARALLEL_FROM` rows or more by ``workers``
    processes, default :func:`termgrade.workers.default_workers`); return the task ids
    seen."""
    before = len(report.findings)
    task_ids: set[str] = set()
    for info in infos:
        if info.row_schema not in TASK_SCHEMAS:
            continue
        for path in info.files:
            _check_file(paths, path, report, task_ids, workers)
    if paths.tasks_dir.is_dir():
        for tree in sorted(p for p in paths.tasks_dir.iterdir() if p.is_dir()):
            if tree.name not in task_ids:
                report.add(Finding("archive", paths.rel(tree), "task tree has no row"))
    if task_ids:
        report.record("archive", f"{len(task_ids)} archives match their manifests and re-pack "
                                 "byte for byte from tasks/", before)
    return task_ids


def check_registry(paths: RepoPaths, task_ids: set[str], report: ValidationReport) -> None:
    if not paths.tasks_dir.is_dir():
        return
    before = len(report.findings)
    rel = paths.rel(paths.registry)
    try:
        datasets = json.loads(paths.registry.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        report.add(Finding("registry", rel, f"not readable: {exc}"))
        return
    if not isinstance(datasets, list):
        report.add(Finding("registry", rel, "not a list of datasets"))
        return
    listed: set[str] = set()
    for i, spec in enumerate(datasets):
        missing = {"name", "version", "description", "tasks"} - set(spec)
        if missing:
            report.add(Finding("registry", rel, f"dataset lacks {sorted(missing)}", row=i))
            continue
        for j, task in enumerate(spec["tasks"]):
            path = paths.root / str(task.get("path", ""))
            if not (path / "task.toml").is_file():
                report.add(Finding("registry", rel, f"{task.get('path')} is no task dir",
                                   row=i, field=f"tasks.{j}.path"))
            listed.add(path.name)
    if listed != task_ids:
        report.add(Finding("registry", rel, "lists other tasks than the rows: "
                           f"{sorted(listed ^ task_ids)[:5]}"))
    report.record("registry", f"registry.json lists the {len(listed)} task dir(s)", before)
