"""The one verdict per task that execution filtering produces."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class Verdict(StrEnum):
    VERIFIED = "verified"
    """The reference solution passed every run and the untouched container failed."""
    UNSATISFIABLE = "unsatisfiable"
    """The reference solution never passed, or its changes are an integrity finding (the
    grader scores such changes 0 for any agent; the finding is the reason)."""
    FLAKY = "flaky"
    """The reference solution passed some runs but not all."""
    VACUOUS = "vacuous"
    """The untouched container passes, or every test was skipped: it measures nothing."""
    BUILD_FAILED = "build_failed"
    """The image did not build offline."""
    ERROR = "error"
    """The verifier crashed, timed out or wrote no reward (never silently 0)."""
    HACKABLE = "hackable"
    """An attack of the battery (``verify --attacks``) earned a reward, or left it unscored."""
    NO_SOLUTION = "no_solution"
    """The task ships no reference solution: the untouched container failed (the nop
    check ran), but whether the tests can be passed at all is unknown."""


def classify(
    *,
    built: bool,
    oracle_rewards: Sequence[float | None],
    nop_reward: float | None,
    errored: bool,
    all_skipped: bool,
    hacked: bool = False,
    has_solution: bool = True,
    oracle_tampered: bool = False,
) -> Verdict:
    """Precedence: build_failed, error, hackable, unsatisfiable (the reference solution's
    changes are an integrity finding: ``oracle_tampered``), vacuous (all skipped),
    no_solution (the untouched container fails; with no solution the oracle never ran),
    unsatisfiable, vacuous (the untouched container passes), flaky, verified.

    ``errored`` is for a verifier that crashed, timed out or wrote nothing; a reference
    run scored 0 for integrity findings is not an error (it is ``oracle_tampered``)."""
    if not built:
        return Verdict.BUILD_FAILED
    if errored or nop_reward is None or (has_solution and (
            not oracle_rewards or any(r is None for r in oracle_rewards))):
        return Verdict.ERROR
    if hacked:
        return Verdict.HACKABLE
    if oracle_tampered and has_solution:
        return Verdict.UNSATISFIABLE
    if all_skipped:  # nothing ran, so nothing passed: the grader scores it 0, it measures nothing
        return Verdict.VACUOUS
    if not has_solution:
        return Verdict.VACUOUS if nop_reward >= 1.0 else Verdict.NO_SOLUTION
    passes = sum(1 for r in oracle_rewards if r is not None and r >= 1.0)
    if passes == 0:
        return Verdict.UNSATISFIABLE
    if nop_reward >= 1.0:
        return Verdict.VACUOUS
    if passes < len(oracle_rewards):
        return Verdict.FLAKY
    return Verdict.VERIFIED
