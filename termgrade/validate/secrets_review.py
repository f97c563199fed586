"""``termgrade secrets review DIR``: a person decides, finding by finding, what is a secret.

The scan (:mod:`.secrets_check`) finds candidate secrets in the repo's text files and in
the string cells of its parquet files; only a person can say which are real. This lists
each distinct finding (a file and a secret hash: one decision covers every place the
same value appears in that file) with its context (the lines around it; for a parquet
cell, the cell's text, found again by its row and column) and records the decision in
the repo's detect-secrets baseline (``dist/<repo>.secrets.baseline``, beside the repo,
never published) as ``"is_secret": true`` or ``false``. ``validate`` passes only
findings marked ``false``; an entry never reviewed fails as if it were not listed.

A third-party corpus has thousands (TermiGen's environments: 3,036, fixture hashes and
the sample keys of its security tasks): :func:`decide_many` decides every finding a
:class:`Selection` picks (files by glob, detectors by type) at once, with the reason a
person gives, recorded in each entry as ``"reason"``.

detect-secrets' own ``audit`` cannot do this: it resolves file names against the working
directory and has no notion of a finding inside a parquet cell.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termgrade.builders.layout import RepoPaths
from termgrade.core.atomic import atomic_write_text
from termgrade.validate.errors import SecretsReviewError
from termgrade.validate.secrets_check import Hit, load_baseline, scan

CONTEXT_LINES = 2
"""Lines shown before and after the flagged one."""


@dataclass
class ReviewItem:
    """One distinct finding: a file and a secret hash, where it first appears."""

    hit: Hit
    """The first place it was found."""
    places: int
    """How many places of the file hold it (rows of a parquet file, lines of a text)."""
    decision: bool | None
    """The baseline's ``is_secret``: None when no person has decided."""
    context: list[tuple[int, str]] = field(default_factory=list)
    """(1-based line number, text) around the flagged line."""

    @property
    def where(self) -> str:
        if self.hit.row is None:
            return f"{self.hit.file} line {self.hit.line}"
        return (f"{self.hit.file} row {self.hit.row} [{self.hit.column}] line {self.hit.line} "
                "of the cell")


def _around(lines: list[str], number: int) -> list[tuple[int, str]]:
    first = max(1, number - CONTEXT_LINES)
    last = min(len(lines), number + CONTEXT_LINES)
    return [(n, lines[n - 1]) for n in range(first, last + 1)]


def _strings(value: Any, parts: list[str]) -> Iterator[str]:
    """The strings at the dotted path ``parts`` under ``value`` (lists walked)."""
    if isinstance(value, list):
        for item in value:
            yield from _strings(item, parts)
    elif not parts:
        if isinstance(value, str):
            yield value
    elif isinstance(value, dict):
        yield from _strings(value.get(parts[0]), parts[1:])


def cell_text(path: Path, hit: Hit) -> str | None:
    """The text of the cell a finding is in: of the strings at ``hit.column`` in row
    ``hit.row``, the one in which the scan finds ``hit.hashed_secret`` on ``hit.line``."""
    import pyarrow.parquet as pq

    from termgrade.validate.cell_secrets import scan_texts

    if hit.row is None or hit.column is None:
        return None
    parquet = pq.ParquetFile(path)
    top, *rest = hit.column.split(".")
    start = 0
    for group in range(parquet.num_row_groups):
        rows = parquet.metadata.row_group(group).num_rows
        if hit.row < start + rows:
            table = parquet.read_row_group(group, columns=[top])
            value = table.column(top)[hit.row - start].as_py()
            break
        start += rows
    else:
        return None
    texts = list(dict.fromkeys(_strings(value, rest)))
    found = scan_texts(texts) if texts else {}
    for text in texts:
        if any(line == hit.line and hashed == hit.hashed_secret
               for line, _, hashed in found.get(text, [])):
            return text
    return texts[0] if texts else None


def _context(paths: RepoPaths, hit: Hit) -> list[tuple[int, str]]:
    path = paths.root / hit.file
    if hit.row is not None:
        text = cell_text(path, hit)
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
    if text is None:
        return []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return _around(lines, hit.line)


def review_items(root: Path, baseline: Path | None = None, *,
                 context: bool = True) -> list[ReviewItem]:
    """Every finding that a person must decide on (known false positives left out), one
    per file and secret hash, with the baseline's decision and, with ``context``, the
    lines around it. ``baseline``: default ``<repo>.secrets.baseline`` beside the repo."""
    paths = RepoPaths(Path(root).resolve())
    if not paths.root.is_dir():
        raise SecretsReviewError(f"{root}: no such directory",
                              fix="pass a repo staged by `termgrade build`")
    baseline = baseline or paths.secrets_baseline
    decisions = load_baseline(baseline if baseline.is_file() else None)
    items: dict[tuple[str, str], ReviewItem] = {}
    for hit in scan(paths)[0]:
        if hit.known_false_positive:
            continue
        key = (hit.file, hit.hashed_secret)
        if key in items:
            items[key].places += 1
        else:
            items[key] = ReviewItem(hit, 1, decisions.get(key))
    if context:
        for item in items.values():
            item.context = _context(paths, item.hit)
    return list(items.values())


def _read_baseline(path: Path) -> dict[str, Any]:
    if not path.is_file():
        from detect_secrets.__version__ import VERSION

        return {"version": VERSION, "results": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SecretsReviewError(f"{path}: not a detect-secrets baseline ({exc})",
                              fix="delete it and review again with `termgrade secrets "
                              "review`") from None
    if not isinstance(data, dict) or not isinstance(data.get("results", {}), dict):
        raise SecretsReviewError(f"{path}: not a detect-secrets baseline (no results mapping)",
                              fix="delete it and review again with `termgrade secrets review`")
    data.setdefault("results", {})
    return data


def record_decisions(baseline: Path, decided: list[tuple[Hit, bool]],
                     reason: str | None = None) -> int:
    """Write each ``(finding, is_secret)`` into the baseline (its entry for the file and
    hash, added when missing), with ``reason`` when given; returns how many entries
    changed."""
    data = _read_baseline(baseline)
    changed = 0
    for hit, is_secret in decided:
        entries = data["results"].setdefault(hit.file, [])
        mine = [e for e in entries if e.get("hashed_secret") == hit.hashed_secret]
        if not mine:
            entry: dict[str, Any] = {"type": hit.type, "filename": hit.file,
                                     "hashed_secret": hit.hashed_secret,
                                     "is_verified": False, "line_number": hit.line}
            if hit.row is not None:
                entry.update(row=hit.row, column=hit.column)
            entries.append(entry)
            mine = [entry]
        for entry in mine:
            if entry.get("is_secret") is not is_secret or (
                    reason is not None and entry.get("reason") != reason):
                entry["is_secret"] = is_secret
                changed += 1
            if reason is not None:
                entry["reason"] = reason
    atomic_write_text(baseline, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return changed


@dataclass(frozen=True)
class Selection:
    """Which findings one decision covers: every file matching one of ``files`` (globs
    on the path relative to the repo root, ``*`` crossing folders) and every detector
    among ``detectors`` (detect-secrets' types, any case); empty: all of them."""

    files: tuple[str, ...] = ()
    detectors: tuple[str, ...] = ()

    def picks(self, hit: Hit) -> bool:
        return ((not self.files or any(fnmatch.fnmatchcase(hit.file, g) for g in self.files))
                and (not self.detectors
                     or hit.type.casefold() in {d.casefold() for d in self.detectors}))


def known_detectors() -> list[str]:
    """The types detect-secrets' plugins report (``Base64 High Entropy String``...)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return sorted(get_mapping_from_secret_type_to_class())


def decide_many(items: list[ReviewItem], baseline: Path, selection: Selection, *,
                is_secret: bool, reason: str, again: bool = False) -> tuple[int, int]:
    """Record one decision, with its reason, for every finding ``selection`` picks (only
    undecided ones unless ``again``); returns (findings picked, entries changed)."""
    if not reason.strip():
        raise SecretsReviewError("--reason is empty: a decision on many findings at once "
                                 "must say why",
                                 fix="give --reason TEXT, e.g. --reason 'fixture hashes of "
                                     "the corpus tasks, not credentials'")
    known = {t.casefold() for t in known_detectors()}
    unknown = [d for d in selection.detectors if d.casefold() not in known]
    if unknown:
        raise SecretsReviewError(
            f"--detector {', '.join(map(repr, unknown))}: no detect-secrets detector "
            "reports that type",
            fix="name one of: " + ", ".join(known_detectors()))
    picked = [i for i in items if (again or i.decision is None) and selection.picks(i.hit)]
    changed = record_decisions(baseline, [(i.hit, is_secret) for i in picked],
                               reason.strip()) if picked else 0
    return len(picked), changed
