"""Per-test verdicts from a Harbor trial's verifier directory.

Reports are tried in the order TermGrade's own grader uses: ``junit.xml`` (keeps
parametrize ids), ``ctrf.json`` (pytest-json-ctrf folds parametrized cases into one
entry), then pytest's ``-rA`` summary lines in ``test-stdout.txt``. Names are the test's
own name (``test_x[param]``), without the file prefix, as TermGrade's grader reports them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from termgrade.grading.reports import (
    Outcome,
    TestVerdict,
    parse_ctrf,
    parse_junit,
    parse_pytest_summary,
)
from termgrade.records import TestResult

MAX_REPORT_BYTES = 16 << 20

_REPORTS: tuple[tuple[str, Callable[[bytes], list[TestVerdict]]], ...] = (
    ("junit.xml", parse_junit),
    ("ctrf.json", parse_ctrf),
)


def _short(name: str) -> str:
    return name.split("::")[-1]


def read_verdicts(verifier_dir: Path) -> list[TestResult]:
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
            return [TestResult(name=_short(v.name), outcome=v.outcome.value) for v in verdicts]
    stdout = verifier_dir / "test-stdout.txt"
    if stdout.is_file() and stdout.stat().st_size <= MAX_REPORT_BYTES:
        text = stdout.read_text(encoding="utf-8", errors="replace")
        return [TestResult(name=v.name, outcome=v.outcome.value)
                for v in parse_pytest_summary(text)]
    return []


def count_outcomes(tests: list[TestResult]) -> tuple[int | None, int | None]:
    """(passed, failed-or-errored); (None, None) when there are no verdicts."""
    if not tests:
        return None, None
    passed = sum(1 for t in tests if t.outcome == Outcome.PASSED.value)
    failed = sum(1 for t in tests if t.outcome in (Outcome.FAILED.value, Outcome.ERROR.value))
    return passed, failed
