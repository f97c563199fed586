"""The decision: the reward from the signed per-test record, judged against the reference
solution's own record (docs/grading.md, "The decision"), and what the verifier's processes
changed while the tests ran."""

from __future__ import annotations

from termgrade.records.verdict import Outcome, TestVerdict
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review.standins import startup_or_config
from termgrade.scoring.verifier.attestation import Attestation
from termgrade.scoring.verifier.during import Trust, unexplained
from termgrade.scoring.verifier.result import VerifierResult


def _weight_of(name: str, weights: dict[str, float]) -> float:
    function = name.split("::")[-1]
    for key in (name, function, function.split("[")[0]):
        if key in weights:
            return weights[key]
    return next((w for k, w in weights.items() if name.endswith(k)), 0.0)


def reference_outcomes(reference: ReferenceRecord | None) -> dict[str, str] | None:
    """The reference run's per-test outcomes the decision rule judges against; None when
    there is no reference or it recorded no attested test."""
    return dict(reference.tests) if reference is not None and reference.tests else None


def credit(attestation: Attestation, weights: dict[str, float] | None,
           reference: dict[str, str] | None = None) -> tuple[float, str | None]:
    """The reward the attested record earns, and why it is not 1 (None when it is).

    Without weights: 1 when every session that ran tests passed (the decision rule of
    :meth:`Attestation.pass_blockers`, against the ``reference`` run's outcomes), else 0.
    With weights: the weighted share of the attested tests that passed, provided the
    record is complete and trusted.
    """
    blockers = attestation.pass_blockers(reference=reference)
    if weights is None or not blockers:
        return (0.0, blockers[0]) if blockers else (1.0, None)
    hard = attestation.pass_blockers(soft=False, reference=reference)
    if hard:
        return 0.0, hard[0]
    earned = sum(_weight_of(v.name, weights) for v in attestation.verdicts()
                 if v.outcome is Outcome.PASSED)
    return min(1.0, earned / sum(weights.values())), blockers[0]


def decide(result: VerifierResult, attestation: Attestation,
           weights: dict[str, float] | None = None,
           reference: ReferenceRecord | None = None) -> VerifierResult:
    """The reward, computed here from the attested record; test.sh's number can only
    lower it.

    Every test of ``reference`` (the reference solution's recorded run), by node id, must
    be in the record. A skip, xfail or deselection is neutral only where ``reference`` had
    the same outcome for the same test; without one, only one that a marker in the tests'
    source caused whose condition the platform alone decides, or test.sh's own ``-k``.
    ``failure`` is set when scoring itself failed (a finding, an untrusted or incomplete
    record) or when test.sh claimed more than the record earns; an ordinary run whose
    attested tests failed scores 0 with no failure, as its tests say why.
    """
    result.outcomes = attestation.outcomes()
    result.evidence = attestation.evidence()
    if result.tampered:
        return result.fail("integrity findings: " + "; ".join(result.tampered[:3]))
    if result.failure is not None or result.raw_reward is None:
        return result.fail(result.failure or "no reward")
    untrusted = attestation.trust_blockers()
    if untrusted:
        result.tampered.extend(untrusted)
        return result.fail("attestation: " + untrusted[0])
    against = reference_outcomes(reference)
    hard = attestation.pass_blockers(soft=False, reference=against)
    if hard:
        return result.fail("attestation: " + hard[0])
    earned, why = credit(attestation, weights, against)
    result.attested = why is None
    result.reward = min(earned, max(0.0, result.raw_reward))
    if result.raw_reward > earned and why is not None:
        result.failure = (f"attestation: test.sh reported {result.raw_reward:g}, the attested "
                          f"record earns {earned:g}: {why}")
    return result


def decide_unattested(result: VerifierResult, attestation: Attestation) -> VerifierResult:
    """The reward of an unattestable task's trial: ``test.sh``'s own number, as Harbor
    reads it (clamped to [0, 1]), with ``attested`` false.

    Integrity findings, a forged or broken attestation channel and any failure to score
    still give 0; alarms about agent code in pytest do not (loading it is how such a task's
    tests work, which is why the task is unattestable).
    """
    result.attested = False
    if result.tampered:
        return result.fail("integrity findings: " + "; ".join(result.tampered[:3]))
    if result.failure is not None or result.raw_reward is None:
        return result.fail(result.failure or "no reward")
    if attestation.problems:
        result.tampered.extend(attestation.problems)
        return result.fail("attestation: " + attestation.problems[0])
    result.reward = min(1.0, max(0.0, result.raw_reward))
    return result


def all_skipped(tests: list[TestVerdict]) -> bool:
    return bool(tests) and all(t.outcome is Outcome.SKIPPED for t in tests)


def judge_changes(result: VerifierResult, changed: list[tuple[str, Trust]],
                   standins: list[tuple[str, str]], reference: ReferenceRecord | None, *,
                   reference_run: bool) -> None:
    """What the verifier's processes changed (:mod:`termgrade.scoring.verifier.during`): the image's
    files (``changed``) and created stand-ins (``standins``: path and finding). A change
    the reference solution's own run made too is the tests' (or the task's program's);
    the reference's run itself is recorded, not judged (it is how the tests' own changes
    are known). Otherwise software, or with a recorded reference anything a later test
    or tool trusts, is a finding; a stand-in is a finding except a start-up or tool
    configuration with no reference to tell (a test's own ``git config --global``); the
    rest is said."""
    result.image_changes = sorted({p for p, _ in changed} | {p for p, _ in standins})
    if reference_run:
        return
    known = reference.verifier_changes if reference is not None else None
    extra = set(unexplained(result.image_changes, known or []))
    floor = Trust.SOFTWARE if known is None else Trust.TRUSTED
    bad = [p for p, level in changed if p in extra and level >= floor]
    result.tampered += [
        f"M {p}: an image file changed while the tests ran, which the reference solution's "
        "run did not change (agent code the tests ran rewrote what a later test or tool "
        "reads)" for p in bad[:MAX_LISTED_CHANGES]]
    said = [p for p, _ in changed if p in extra and p not in bad]
    for path, finding in standins:
        if path not in extra:
            continue  # the reference's run made it too
        if known is None and startup_or_config(path):
            said.append(path)
        else:
            result.tampered.append(f"{finding} (while the verifier ran)")
    if said:
        why = ("not judged: no reference run recorded what its tests change" if known is None
               else "data the reference's run did not change, not judged")
        more = f" and {len(said) - MAX_LISTED_CHANGES} more" \
            if len(said) > MAX_LISTED_CHANGES else ""
        result.output += (f"\ntermgrade: changed while the tests ran ({why}): "
                          f"{', '.join(said[:MAX_LISTED_CHANGES])}{more}\n")


MAX_LISTED_CHANGES = 20
