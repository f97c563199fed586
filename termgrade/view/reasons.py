"""Why a trial scored what it did, as one word a filter can use.

The grader writes why it gave 0 into ``exception_message`` with ``exception_type``
``GradingFailure`` (:mod:`termgrade.grade.record`): integrity findings (tampering with the
tests, the reward or the grader) begin ``integrity findings:`` or ``attestation:``; a
verifier that ran out of time says ``timed out``; a disk alarm names its ``limit``.
Infrastructure errors are not counted and never a task failure. A counted trial with no
such message that did not pass failed its tests.
"""

from __future__ import annotations

import math

PASSED = "passed"
TESTS = "tests_failed"
INTEGRITY = "integrity"
TIMEOUT = "timeout"
LIMIT = "limit"
GRADING = "grading_failure"
INFRASTRUCTURE = "infrastructure"

LABELS: dict[str, str] = {
    PASSED: "passed",
    TESTS: "tests failed",
    INTEGRITY: "integrity finding (tamper)",
    TIMEOUT: "timed out",
    LIMIT: "over a limit (disk alarm)",
    GRADING: "grading failure",
    INFRASTRUCTURE: "infrastructure (not counted)",
}
"""Reason -> what the viewer shows; the keys are the filter's values, in display order."""

_INTEGRITY_PREFIXES = ("integrity findings:", "attestation:")


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def classify(*, passed: bool, counted: bool, message: object = None,
             agent_timed_out: bool = False) -> str:
    """The reason of one trial (a key of :data:`LABELS`)."""
    text = _text(message)
    if not counted:
        return INFRASTRUCTURE
    if passed:
        return PASSED
    lowered = text.lower()
    if lowered.startswith(_INTEGRITY_PREFIXES):
        return INTEGRITY
    if agent_timed_out or "timed out" in lowered:
        return TIMEOUT
    if "limit" in lowered and "mib" in lowered:
        return LIMIT
    if text:
        return GRADING
    return TESTS


def tamper_findings(message: object) -> list[str]:
    """The integrity findings a failure message lists (the grader keeps the first three)."""
    text = _text(message)
    for prefix in _INTEGRITY_PREFIXES:
        if text.lower().startswith(prefix):
            body = text[len(prefix):].strip()
            return [part.strip() for part in body.split("; ") if part.strip()]
    return []
