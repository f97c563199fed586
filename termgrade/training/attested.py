"""The RL agent loop's rule for unattested tasks: left out unless the run includes them.

A prompt row of an unattestable task (:func:`termgrade.audit.attestable.attestability`)
reaches the loop only when ``train prepare --include-unattested`` wrote it, or when the
task changed since. Without that flag in the agent-loop config the loop refuses the task
before any episode (the trajectory is unscored: no gradient, the refusal in its failure);
with it, the trial is graded by test.sh's own reward and says ``attested: false``.
"""

from __future__ import annotations

from typing import NamedTuple

from termgrade.audit.attestable import INCLUDE_FLAG, attestability
from termgrade.scoring.verifier.attestable import Attestability
from termgrade.task import Task


class LoopDecision(NamedTuple):
    attestable: Attestability
    refusal: str | None
    """Why the loop does not run this task (None: it runs)."""


def loop_decision(task: Task, *, include_unattested: bool) -> LoopDecision:
    verdict = attestability(task)
    if verdict.attested or include_unattested:
        return LoopDecision(verdict, None)
    return LoopDecision(verdict, (
        f"unattested task {task.task_id} left out ({verdict.reason}); prepare the run with "
        f"`termgrade train prepare {INCLUDE_FLAG}` to train on it"))
