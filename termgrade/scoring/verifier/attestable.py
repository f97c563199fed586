"""Attested and unattested tasks: whether the grader can attest a task's verifier.

A task is *attestable* when every decision its ``test.sh`` makes is covered by a pytest
session the grader signs (:mod:`termgrade.scoring.verifier.attestation`): the reward is then
computed from the signed per-test record, and ``test.sh``'s own number can only lower
it. A task is *unattestable* when its verifier decides where no attested session looks:
it runs no pytest (a bash check writing ``reward.txt``, ``python -m unittest``, C tests
built by ``make``), runs the agent's program outside pytest, or loads the agent's code
into pytest's own process. Such a task is graded the way its author meant (``test.sh``'s
own reward, as Harbor reads it) and its trials and labels say ``attested: false``.

Attestability is a property of the task, decided before any trial: from the reference
run ``verify`` recorded (:class:`~termgrade.scoring.reference.ReferenceRecord`) and the
static audit checks (:func:`termgrade.audit.attestable.attestability`, one floor up). A
trial never decides it: an alarm in a trial of an attestable task is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.task import Task


@dataclass(frozen=True)
class Attestability:
    """Whether a task's verifier can be attested, and why not when it cannot."""

    attested: bool
    reason: str | None = None
    """Why the task is unattestable (None when it is attestable)."""

    def __post_init__(self) -> None:
        if self.attested and self.reason is not None:
            raise ValueError("an attestable task has no reason to be unattested")
        if not self.attested and not self.reason:
            raise ValueError("an unattestable task needs the reason it is one")


ATTESTED = Attestability(True)


def from_reference(reference: ReferenceRecord | None) -> Attestability:
    """What the reference run says; attestable when there is none (the strict default:
    a trial is never graded unattested without a reason recorded for its task)."""
    if reference is None or reference.attested:
        return ATTESTED
    return Attestability(False, reference.attest_reason or "the reference run was not "
                         "attested (verify recorded no reason)")


def grading_inputs(task: Task, reference: ReferenceRecord | None = None,
                   attestable: Attestability | None = None
                   ) -> tuple[ReferenceRecord | None, Attestability]:
    """A trial's yardstick and rule, each found once: ``reference`` (default: the record
    :func:`~termgrade.scoring.reference.reference_for` finds for ``task``'s current files)
    and ``attestable`` (default: what that record says)."""
    if reference is None:
        reference = reference_for(task)
    return reference, attestable or from_reference(reference)
