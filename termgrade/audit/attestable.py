"""Whether a task is attestable: the one decision (:class:`~termgrade.scoring.attestable.
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

from termgrade.audit.documents import read_harbor
from termgrade.audit.static_checks import CheckOptions, agent_code_isolated, verifier_attested
from termgrade.scoring.attestable import ATTESTED, Attestability, from_reference
from termgrade.scoring.reference import ReferenceRecord, reference_for
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
