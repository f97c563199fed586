"""Whether a task is attestable: the one decision (:class:`~termgrade.scoring.verifier.attestable.
Attestability`), from the reference run ``verify`` recorded and the static checks.

Unattestable when any of these holds (the first reason is kept):

* the reference record says so (``ReferenceRecord.attested`` false, written by ``verify``);
* ``verifier_attested``: ``test.sh`` runs no pytest, or runs the agent's program outside
  pytest (:mod:`termgrade.audit.verifier_steps`);
* ``agent_code_isolated``: the tests load the agent's code into pytest's own process
  (:mod:`termgrade.audit.agent_code`).

Every caller that grades (``run``, ``grade``, the RL agent loop) asks here and hands the
answer to :func:`termgrade.scoring.trial.run_task`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from termgrade.audit.documents import read_harbor
from termgrade.audit.static_checks import CheckOptions, agent_code_isolated, verifier_attested
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.scoring.verifier.attestable import ATTESTED, Attestability, from_reference
from termgrade.task import Task

STATIC_CHECKS = {"verifier_attested": verifier_attested,
                 "agent_code_isolated": agent_code_isolated}
"""The audit checks whose failure makes a task unattestable."""


def attestability(task: Task, reference: ReferenceRecord | None = None) -> Attestability:
    """``task``'s attestability. ``reference``: its recorded reference run (default: the
    one :func:`~termgrade.scoring.reference.reference_for` finds for its current files)."""
    recorded = from_reference(reference or reference_for(task))
    if not recorded.attested:
        return recorded
    doc = read_harbor(task.paths.root)
    for name, check in STATIC_CHECKS.items():
        reason = check(doc, CheckOptions())
        if reason is not None:
            return Attestability(False, f"{name}: {reason}")
    return ATTESTED


def unattested_tasks(tasks: Iterable[Task]) -> dict[str, str]:
    """Task id -> why it is unattestable, for each unattestable task among ``tasks``."""
    found = {}
    for task in tasks:
        verdict = attestability(task)
        if not verdict.attested:
            found[task.task_id] = verdict.reason or "unattestable"
    return found


INCLUDE_FLAG = "--include-unattested"


def exclusion_note(unattested: Sequence[str], *, included: bool, what: str) -> str:
    """The one line every stage prints about the unattested tasks it left out (or kept)."""
    ids = sorted(unattested)
    shown = ", ".join(ids[:5]) + (f" (+{len(ids) - 5} more)" if len(ids) > 5 else "")
    if included:
        return (f"including {len(ids)} unattested task(s) in {what} ({shown}): graded by "
                "test.sh's own reward, which the grader cannot attest; a policy that games "
                "such a verifier is not caught")
    return (f"left out {len(ids)} unattested task(s) from {what} ({shown}): graded by "
            f"test.sh's own reward, which the grader cannot attest; pass {INCLUDE_FLAG} to "
            "include them")
