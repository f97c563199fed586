"""A test's name and outcome: the one model of a per-test verdict.

The grader's parsers (:mod:`termgrade.scoring.verifier.verdict_parsers`), the verify record
(``VerifyRecord.tests``), the trial record (``TrialRecord.tests``) and ingestion all use
:class:`TestVerdict` and :class:`Outcome`. In JSON a verdict is ``{"name": ...,
"outcome": "passed"|"failed"|"skipped"|"error"}``. It is a frozen (pydantic) dataclass:
``TestVerdict(name, outcome)``, validated, hashable, and a struct in Arrow
(:mod:`termgrade.records.arrow`).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass


class Outcome(StrEnum):
    """What happened to one test: passed, failed, skipped or error."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"


FAILED_OUTCOMES: tuple[Outcome, ...] = (Outcome.FAILED, Outcome.ERROR)
"""The outcomes that count as a failed test (an errored test failed too). A tuple, so that
plain strings test as members too (``"failed" in FAILED_OUTCOMES``)."""


@dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class TestVerdict:
    """One test (assertion) and its outcome."""

    __test__ = False  # not a pytest test class

    name: Annotated[str, Field(description="Test (assertion) name as the verifier reports it.")]
    outcome: Annotated[Outcome, Field(description="passed, failed, skipped or error.")]

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "outcome": self.outcome.value}


def count_outcomes(tests: Iterable[TestVerdict]) -> tuple[int | None, int | None]:
    """(passed, failed-or-errored); (None, None) when there are no verdicts."""
    listed = list(tests)
    if not listed:
        return None, None
    passed = sum(1 for t in listed if t.outcome == Outcome.PASSED)
    failed = sum(1 for t in listed if t.outcome in FAILED_OUTCOMES)
    return passed, failed
