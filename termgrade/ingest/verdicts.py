"""Per-test verdicts from a Harbor trial's verifier directory.

Reports are tried in the order TermGrade's own grader uses: ``junit.xml`` (keeps
parametrize ids), ``ctrf.json`` (pytest-json-ctrf folds parametrized cases into one
entry), then pytest's ``-rA`` summary lines in ``test-stdout.txt``. Names are the test's
own name (``test_x[param]``), without the file prefix, as TermGrade's grader reports them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from termgrade.records.verdict import TestVerdict
from termgrade.scoring.verifier.verdict_parsers import (
    parse_ctrf,
    parse_junit,
    parse_pytest_summary,
)

__all__ = ["MAX_REPORT_BYTES", "read_verdicts"]

MAX_REPORT_BYTES = 16 << 20

_REPORTS: tuple[tuple[str, Callable[[bytes], list[TestVerdict]]], ...] = (
    ("junit.xml", parse_junit),
    ("ctrf.json", parse_ctrf),
)


def _short(name: str) -> str:
    return name.split("::")[-1]


def read_verdicts(verifier_dir: Path) -> list[TestVerdict]:
    """Verdicts from the first usable report; empty when the verifier left none."""
    for filename, parser in _REPORTS:
        path = verifier_dir / filename
        if not path.is_file() or path.stat().st_size > MAX_REPORT_BYTES:
            continue
        try:
            verdicts = parser(path.read_bytes())
        except (ValueError, KeyError, TypeError):
            continue
        if verdicts:
            return [TestVerdict(_short(v.name), v.outcome) for v in verdicts]
    stdout = verifier_dir / "test-stdout.txt"
    if stdout.is_file() and stdout.stat().st_size <= MAX_REPORT_BYTES:
        return parse_pytest_summary(stdout.read_text(encoding="utf-8", errors="replace"))
    return []
