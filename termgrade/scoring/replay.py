"""A regrade: a trial's kept work scored again, on the task as it is now, with no agent.

Everything but the agent phase is grading's own (:func:`termgrade.scoring.trial.run_pair`
and :func:`~termgrade.scoring.score.score_layer`): the task's scoring setup and transfer
set as they are now, a fresh pair of containers from the (rebuilt) task image, and then,
where grading would run the agent in A, the kept work
(:mod:`termgrade.scoring.kept`) is rebuilt as an overlay upper directory beside A's
layer on the host. A itself runs nothing; its image's layers are what the review compares
against. That rebuilt layer is then reviewed, carried into B, B started and the verifier
run exactly as for an agent container's layer: the transfer set decides again what
reaches B (kept work outside it is left out and counted), stand-ins and closure changes
are findings again, the disk limit holds, and the reward comes from the signed record.
The kept store is treated as the agent's bytes, because it is: nothing in it reaches B
except through that review, and a blob that is not the bytes its manifest names is
refused (:class:`~termgrade.scoring.errors.KeptWorkError`) and nothing is scored.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from termgrade.records.kept_work import KeptWork
from termgrade.scoring.kept import WorkStore, materialize
from termgrade.scoring.outcome import RunOutcome
from termgrade.scoring.pair.containers import Pair
from termgrade.scoring.phases import timed
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.score import NO_LAYERS, score_layer
from termgrade.scoring.trial import run_pair
from termgrade.scoring.verifier.attestable import Attestability, grading_inputs
from termgrade.scoring.verifier.setup import Scoring
from termgrade.task import Task

LABEL = "regrade"


def regrade_task(task: Task, image: str, work: KeptWork, store: WorkStore, *,
                 reference: ReferenceRecord | None = None,
                 attestable: Attestability | None = None,
                 keep_work: WorkStore | None = None) -> RunOutcome:
    """Score ``work`` (one trial's kept work, its blobs in ``store``) against ``task`` as it
    is now, on ``image``; ``keep_work``: keep what reached this verifier there, as grading
    keeps it (the regrade can then be regraded in turn). KeptWorkError when the kept work
    is not what was kept (a blob's bytes changed, a manifest path leaving the layer); the
    outcome is unscored (``error``) on an engine failure, as a grading trial's would be."""

    def act(pair: Pair, durations: dict[str, float], started: float,
            scoring: Scoring) -> RunOutcome:
        del started
        layer = pair.agent_box.writable_layer()
        if layer is None or pair.score_box.writable_layer() is None:
            return RunOutcome(LABEL, None, durations=durations, error=NO_LAYERS)
        pair.agent_box.halt()  # nothing of A's ever runs: only its image's layers are read
        # beside A's own layer, on its filesystem: carried files move, as in grading
        rebuilt = _scratch(os.path.dirname(layer[0]))
        try:
            with timed(durations, "rebuild"):
                materialize(work, store, rebuilt)
            return score_layer(task, (rebuilt, layer[1]), pair.agent_box.engine_paths(),
                               pair.score_box, scoring, durations, label=LABEL)
        finally:
            shutil.rmtree(rebuilt, ignore_errors=True)

    reference, attestable = grading_inputs(task, reference, attestable)
    return run_pair(task, image, LABEL, act, reference=reference, attestable=attestable,
                    keep_work=keep_work)


def _scratch(beside: str) -> str:
    """An empty directory for the rebuilt layer: beside A's layer when writable there (the
    same filesystem as B's, so the carry moves files), else the system's temp folder."""
    try:
        return tempfile.mkdtemp(prefix="termgrade-kept-", dir=beside)
    except OSError:
        return tempfile.mkdtemp(prefix="termgrade-kept-")
