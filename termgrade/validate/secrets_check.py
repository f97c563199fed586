"""A secret scan of every text a repo ships with ``detect-secrets``: its text files and the
string cells of its parquet files (:mod:`.cell_secrets`: messages, tool outputs, episodes,
verifier output; for a trajectories repo the parquet is the whole content).

Known false positives, filtered and counted (the card documents them): findings in
pytest function names, i.e. a secret value that starts with ``test_`` or a flagged line
that defines a ``test_`` function; and TermGrade's own digests, a sha256 in hex written
as the value of one of the fields that hold them (:mod:`.secret_rules`:
``task_digest``, ``scaffold_digest`` in label rows, traces and ATIF files).
Binary cells (task archives) are not text; the task files they hold are scanned as the
``tasks/`` tree, through :mod:`.secrets_scan`
(detect-secrets' own plugins and filters on the lines they can flag: the same findings,
15x to 26x faster), a process per core for a large tree, each name-and-bytes once, and
not again while unchanged (the validate cache). Other findings fail unless a
person reviewed them and marked them not secret (``"is_secret": false``) in the repo's
detect-secrets baseline: ``termgrade secrets review DIR`` (:mod:`.secrets_review`) lists
each with its context and records the decision; an entry listed but not reviewed, or
marked a secret, fails. Or the line carries detect-secrets' ``pragma: allowlist secret``
comment. Task fixtures trip the entropy plugins (git object ids, sample keys of crypto
tasks): review them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termgrade.builders.layout import RepoPaths
from termgrade.core.atomic import atomic_write_text
from termgrade.pools.processes import map_in_workers
from termgrade.validate.cache import ValidationCache
from termgrade.validate.cell_secrets import CELL_NAME, row_group_parts
from termgrade.validate.findings import ValidationFinding, ValidationReport
from termgrade.validate.secret_rules import is_known_false_positive

BINARY_SUFFIXES = frozenset({".parquet", ".png", ".jpg", ".gz", ".tar", ".zip", ".whl"})
RULES_VERSION = 4
"""Bumped when :func:`.secret_rules.is_known_false_positive` or what a scan finds
changes: cached verdicts are redone (4: cells are scanned in their JSON form too,
:mod:`.secrets_json_form`)."""


def _text_files(paths: RepoPaths) -> list[Path]:
    return [p for p in sorted(paths.root.rglob("*"))
            if p.is_file() and p.suffix.lower() not in BINARY_SUFFIXES]


def text_file_groups(paths: RepoPaths,
                     memo: ValidationCache) -> dict[tuple[str, str], list[Path]]:
    """The text files under the repo root by (name, sha256): detect-secrets reads a file's
    name and lines only, so one of each group is scanned for all."""
    groups: dict[tuple[str, str], list[Path]] = {}
    for path in _text_files(paths):
        groups.setdefault((path.name, memo.digest(path)), []).append(path)
    return groups


@dataclass(frozen=True)
class Hit:
    file: str
    """Relative to the repo root."""
    line: int
    type: str
    hashed_secret: str
    known_false_positive: bool
    row: int | None = None
    """A parquet cell's row (0-based), for a finding in a cell; ``line`` is then the
    line within the cell's text."""
    column: str | None = None
    """A parquet cell's dotted column (``messages.content``)."""


PARALLEL_FROM_BYTES = 8 << 20
"""Text this large is scanned by a process per core."""

CELL_PART_BYTES = 64 << 20
"""Parquet (compressed) bytes of one cell-scan job: a large file is a process per part."""

_Raw = tuple[str, int, str, str, str | None]
"""(file, line, type, hashed secret, secret value) of one detect-secrets finding."""


def scan_files(files: list[str]) -> list[list[list[Any]]]:
    """Per file, detect-secrets' findings (:mod:`.secrets_scan`) as ``[line, type, hashed
    secret, secret value]``; a worker's job (:mod:`termgrade.pools.processes`)."""
    from detect_secrets.settings import default_settings

    from termgrade.validate.secrets_scan import scan_file

    with default_settings():
        return [[[s.line_number, s.type, s.secret_hash, s.secret_value]
                 for s in scan_file(name)] for name in files]


def _scan_all(files: list[Path], workers: int | None) -> list[_Raw]:
    names = [str(p) for p in files]
    total = sum(p.stat().st_size for p in files)
    if total < PARALLEL_FROM_BYTES:
        workers = 1
    # Many small files dealt evenly: one interpreter per worker is enough.
    per_file = map_in_workers("termgrade.validate.secrets_check:scan_files", names,
                              workers=workers, batches_per_worker=1)
    return [(name, line, kind, hashed, value)
            for name, found in zip(names, per_file, strict=True)
            for line, kind, hashed, value in found]


def _cache_key(memo: ValidationCache, path: Path) -> str:
    from detect_secrets.__version__ import VERSION

    # detect-secrets' filters read only the file's name; its plugins only its lines.
    return f"secrets:{VERSION}:r{RULES_VERSION}:{path.name}:{memo.digest(path)}"


_Found = list[tuple[int, str, str, bool]]
"""(line, type, hashed secret, known false positive) of each finding in one file."""


def _judged(raw: list[_Raw]) -> dict[str, _Found]:
    """Per scanned file, its findings with the known-false-positive verdict (which needs
    the line, read here once per file with findings)."""
    found: dict[str, _Found] = {}
    for filename, number, kind, hashed, value in raw:
        if filename not in found:
            found[filename] = []
            lines = Path(filename).read_text(encoding="utf-8", errors="replace").splitlines()
        line = lines[number - 1] if 0 < number <= len(lines) else ""
        found[filename].append((number, kind, hashed, is_known_false_positive(value, line)))
    return found


def scan(paths: RepoPaths, *, memo: ValidationCache | None = None,
         used: set[str] | None = None, workers: int | None = None) -> tuple[list[Hit], int]:
    """Every detect-secrets finding in the repo's text files, and how many files it read.

    Files with the same name and bytes are scanned once. With ``memo``, a file scanned
    before with the same name, bytes and detect-secrets is not scanned again: a clean one
    is a cached pass, one with findings has them stored (types, hashes and line numbers,
    never the secret) to be judged against this run's baseline; the keys this run relied
    on or earned go into ``used``."""
    memo = memo or ValidationCache(paths, enabled=False)
    used = used if used is not None else set()
    groups = text_file_groups(paths, memo)
    n_files = sum(map(len, groups.values()))
    per_file: dict[tuple[str, str], _Found] = {}
    todo = []
    for group, members in groups.items():
        key = _cache_key(memo, members[0])
        recalled = memo.recall(key)
        if recalled is not None:
            per_file[group] = [(int(n), str(k), str(h), bool(f)) for n, k, h, f in recalled]
            used.add(key)
        elif memo.hit(key):
            per_file[group] = []
            used.add(key)
        else:
            todo.append(members[0])
    found = _judged(_scan_all(todo, workers))
    for path in todo:
        key = _cache_key(memo, path)
        group = (path.name, memo.digest(path))
        per_file[group] = found.get(str(path), [])
        if per_file[group]:
            memo.store(key, per_file[group])
        else:
            memo.remember(key)
        used.add(key)
    hits = [Hit(paths.rel(path), number, kind, hashed, false_positive)
            for group, members in groups.items()
            for number, kind, hashed, false_positive in per_file[group]
            for path in members]
    return hits + scan_cells(paths, memo=memo, used=used, workers=workers), n_files


def _cells_key(memo: ValidationCache, path: Path) -> str:
    from detect_secrets.__version__ import VERSION

    return f"secrets-cells:{VERSION}:r{RULES_VERSION}:{CELL_NAME}:{memo.digest(path)}"


def scan_cells(paths: RepoPaths, *, memo: ValidationCache | None = None,
               used: set[str] | None = None, workers: int | None = None) -> list[Hit]:
    """Every detect-secrets finding in the string cells of the repo's parquet files
    (:mod:`.cell_secrets`), a process per core, each file not scanned again while
    unchanged (its findings stored, as for text files: hashes, never the secret)."""
    memo = memo or ValidationCache(paths, enabled=False)
    used = used if used is not None else set()
    per_file: dict[Path, list[list[Any]]] = {}
    todo = []
    for path in paths.parquet_files():
        key = _cells_key(memo, path)
        recalled = memo.recall(key)
        if recalled is not None:
            per_file[path] = recalled
            used.add(key)
        elif memo.hit(key):
            per_file[path] = []
            used.add(key)
        else:
            todo.append(path)
    if sum(p.stat().st_size for p in todo) < PARALLEL_FROM_BYTES // 4:
        workers = 1
    # A large file is scanned in parts (runs of row groups), a process each.
    parts = [(path, groups) for path in todo
             for groups in row_group_parts(path, CELL_PART_BYTES)]
    found = map_in_workers("termgrade.validate.cell_secrets:scan_parquet_parts",
                           [[str(path), groups] for path, groups in parts],
                           workers=workers, batches_per_worker=1)
    merged: dict[Path, list[list[Any]]] = {path: [] for path in todo}
    for (path, _), cells in zip(parts, found, strict=True):
        merged[path].extend(cells)
    for path, cells in merged.items():
        per_file[path] = cells
        key = _cells_key(memo, path)
        if cells:
            memo.store(key, cells)
        else:
            memo.remember(key)
        used.add(key)
    return [Hit(paths.rel(path), int(line), str(kind), str(hashed), bool(false_positive),
                row=int(row), column=str(column))
            for path, cells in sorted(per_file.items())
            for row, column, line, kind, hashed, false_positive in cells]


def load_baseline(path: Path | None) -> dict[tuple[str, str], bool | None]:
    """``(file, hashed_secret)`` -> the reviewer's ``is_secret`` (None: listed, never
    reviewed), from a detect-secrets baseline (file names relative to the repo root)."""
    if path is None:
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[tuple[str, str], bool | None] = {}
    for name, items in data.get("results", {}).items():
        for item in items:
            value = item.get("is_secret")
            key = (name, item["hashed_secret"])
            # One entry marked secret makes the pair a secret; else one reviewed wins.
            if out.get(key) is not True:
                out[key] = value if isinstance(value, bool) else out.get(key)
    return out


def load_reasons(path: Path | None) -> dict[tuple[str, str], str]:
    """``(file, hashed_secret)`` -> the ``reason`` a decision was recorded with
    (``termgrade secrets review --reason``)."""
    if path is None:
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(name, item["hashed_secret"]): str(item["reason"])
            for name, items in data.get("results", {}).items() for item in items
            if isinstance(item.get("reason"), str)}


def write_baseline(paths: RepoPaths, path: Path) -> int:
    """Write the repo's current findings (known false positives left out) as a
    detect-secrets baseline: a finding a person decided on before (the baseline already
    at ``path``) keeps its ``is_secret`` and ``reason``; a new one is unreviewed (it
    fails until ``termgrade secrets review`` records a decision); return how many."""
    from detect_secrets.__version__ import VERSION

    decided = load_baseline(path if path.is_file() else None)
    reasons = load_reasons(path if path.is_file() else None)
    hits = [h for h in scan(paths)[0] if not h.known_false_positive]
    results: dict[str, list[dict[str, object]]] = {}
    for hit in hits:
        entry: dict[str, object] = {
            "type": hit.type, "filename": hit.file, "hashed_secret": hit.hashed_secret,
            "is_verified": False, "line_number": hit.line}
        if hit.row is not None:  # where in the parquet file (detect-secrets ignores these)
            entry.update(row=hit.row, column=hit.column)
        decision = decided.get((hit.file, hit.hashed_secret))
        if decision is not None:
            entry["is_secret"] = decision
            if (hit.file, hit.hashed_secret) in reasons:
                entry["reason"] = reasons[(hit.file, hit.hashed_secret)]
        results.setdefault(hit.file, []).append(entry)
    baseline = {"version": VERSION, "results": results}
    atomic_write_text(path, json.dumps(baseline, indent=2, sort_keys=True) + "\n")
    return len(hits)


def finding(hit: Hit, why: str = "not reviewed", review: str = "") -> ValidationFinding:
    """The validate finding of a hit not reviewed as harmless: where it is and its type,
    never the secret, and what to do (``review``: the command that reviews it)."""
    fix = ("remove it from the repo (and rotate it)" if why == "marked a secret"
           else f"review it: {review or 'termgrade secrets review DIR'}")
    if hit.row is None:
        return ValidationFinding("secrets", hit.file,
                                 f"{hit.type} on line {hit.line} ({why}; {fix})",
                                 field=f"line {hit.line}")
    return ValidationFinding("secrets", hit.file,
                             f"{hit.type} on line {hit.line} of the cell ({why}; {fix})",
                             row=hit.row, field=f"{hit.column} line {hit.line}")


def check_secrets(paths: RepoPaths, report: ValidationReport, *,
                  baseline: Path | None = None, memo: ValidationCache | None = None,
                  used: set[str] | None = None) -> None:
    """Every finding fails unless it is a known false positive or the baseline marks it
    reviewed and not a secret (``"is_secret": false``)."""
    before = len(report.findings)
    hits, n_files = scan(paths, memo=memo, used=used)
    decisions = load_baseline(baseline)
    review = f"termgrade secrets review {paths.root}"
    filtered = audited = 0
    for hit in hits:
        decision = decisions.get((hit.file, hit.hashed_secret), "unlisted")
        if decision is False:
            audited += 1
        elif hit.known_false_positive:
            filtered += 1
        elif decision is True:
            report.add(finding(hit, "marked a secret", review))
        elif decision is None:
            report.add(finding(hit, f"listed in {baseline.name if baseline else 'the baseline'}"
                                    " but not reviewed", review))
        else:
            report.add(finding(hit, "not reviewed", review))
    if audited:
        report.notes.append(f"secrets: {audited} finding(s) reviewed as not secret in the "
                            f"baseline {baseline}")
    if filtered:
        report.notes.append(f"secrets: {filtered} known false positive(s) filtered "
                            "(pytest names starting with test_; TermGrade's own digests)")
    n_parquet = len(paths.parquet_files())
    report.record("secrets", f"no unreviewed detect-secrets finding in {n_files} text "
                             f"file(s) and the text cells of {n_parquet} parquet file(s) "
                             f"({filtered} known false positive(s) filtered, "
                             f"{audited} reviewed as not secret in a baseline)", before)
