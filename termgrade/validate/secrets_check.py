"""A secret scan of the repo's text files with ``detect-secrets``.

Known false positives, filtered and counted (the card documents them): findings in
pytest function names, i.e. a secret value that starts with ``test_`` or a flagged line
that defines a ``test_`` function. Parquet payloads are not scanned line by line
(detect-secrets runs at about 60 KB/s); the task files they hold are scanned as the
``tasks/`` tree. Other findings fail unless a detect-secrets baseline lists them
(:func:`write_baseline` writes one to review with ``detect-secrets audit``), or the line
carries detect-secrets' ``pragma: allowlist secret`` comment. Task fixtures trip the
entropy plugins (git object ids, sample keys of crypto tasks): review, then baseline them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from termgrade.atomic import atomic_write_text
from termgrade.builders.layout import RepoPaths
from termgrade.validate.report import Finding, ValidationReport

BINARY_SUFFIXES = frozenset({".parquet", ".png", ".jpg", ".gz", ".tar", ".zip", ".whl"})
_PYTEST_NAME = re.compile(r"^\s*(async\s+)?def\s+test_\w+\s*\(")


def is_known_false_positive(secret_value: str | None, line: str) -> bool:
    """A pytest name mistaken for a key (the Hub's scanner reports these too)."""
    value = secret_value or ""
    return value.startswith("test_") or bool(_PYTEST_NAME.search(line))


def _text_files(paths: RepoPaths) -> list[Path]:
    return [p for p in sorted(paths.root.rglob("*"))
            if p.is_file() and p.suffix.lower() not in BINARY_SUFFIXES]


@dataclass(frozen=True)
class Hit:
    file: str
    """Relative to the repo root."""
    line: int
    type: str
    hashed_secret: str
    known_false_positive: bool


def scan(paths: RepoPaths) -> tuple[list[Hit], int]:
    """Every detect-secrets finding in the repo's text files, and how many files it read."""
    from detect_secrets.core.secrets_collection import SecretsCollection
    from detect_secrets.settings import default_settings

    files = _text_files(paths)
    collection = SecretsCollection()
    with default_settings():
        for path in files:
            collection.scan_file(str(path))
    hits = []
    for filename, secret in collection:
        path = Path(filename)
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        number = secret.line_number
        line = lines[number - 1] if 0 < number <= len(lines) else ""
        hits.append(Hit(paths.rel(path), number, secret.type, secret.secret_hash,
                        is_known_false_positive(secret.secret_value, line)))
    return hits, len(files)


def load_baseline(path: Path | None) -> set[tuple[str, str]]:
    """``(file, hashed_secret)`` pairs already reviewed, from a detect-secrets baseline
    (file names relative to the repo root). As with ``detect-secrets-hook``, listed
    findings pass unless marked ``"is_secret": true`` by ``detect-secrets audit``."""
    if path is None:
        return set()
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(name, item["hashed_secret"]) for name, items in data.get("results", {}).items()
            for item in items if item.get("is_secret") is not True}


def write_baseline(paths: RepoPaths, path: Path) -> int:
    """Write the repo's current findings (known false positives left out) as a
    detect-secrets baseline to review with ``detect-secrets audit``; return how many."""
    from detect_secrets.__version__ import VERSION

    hits = [h for h in scan(paths)[0] if not h.known_false_positive]
    results: dict[str, list[dict[str, object]]] = {}
    for hit in hits:
        results.setdefault(hit.file, []).append({
            "type": hit.type, "filename": hit.file, "hashed_secret": hit.hashed_secret,
            "is_verified": False, "line_number": hit.line})
    baseline = {"version": VERSION, "results": results}
    atomic_write_text(path, json.dumps(baseline, indent=2, sort_keys=True) + "\n")
    return len(hits)


def check_secrets(paths: RepoPaths, report: ValidationReport, *,
                  baseline: Path | None = None) -> None:
    before = len(report.findings)
    hits, n_files = scan(paths)
    allowed = load_baseline(baseline)
    filtered = audited = 0
    for hit in hits:
        if (hit.file, hit.hashed_secret) in allowed:
            audited += 1
        elif hit.known_false_positive:
            filtered += 1
        else:
            report.add(Finding("secrets", hit.file, f"{hit.type} on line {hit.line}",
                               field=f"line {hit.line}"))
    if audited:
        report.notes.append(f"secrets: {audited} finding(s) listed in the baseline {baseline}")
    if filtered:
        report.notes.append(f"secrets: {filtered} known false positive(s) filtered "
                            "(pytest names starting with test_)")
    report.record("secrets", f"no unreviewed detect-secrets finding in {n_files} text "
                             f"file(s) ({filtered} known false positive(s) filtered, "
                             f"{audited} listed in a baseline)", before)
