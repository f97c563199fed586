"""One trial as a unit of work an executor runs anywhere: locally or on a Ray node.

:func:`run_job` builds the task's image on the machine it runs on (once per process:
:mod:`termgrade.sandbox.image_cache`), runs the trial through the
grader and returns its record. It never raises for an infrastructure failure: that comes
back as an uncounted record, which the runner retries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from termgrade.agent.kinds import ModelAgent
from termgrade.audit.attestable import attestability
from termgrade.core.errors import TermGradeError
from termgrade.grade.record import graded_record
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.image_cache import image_for
from termgrade.sandbox.ownership import run_scope
from termgrade.scoring.pair import Pair, make_pair
from termgrade.scoring.trial import RunOutcome, run_task, scoring_setup
from termgrade.scoring.warm import WARM
from termgrade.task import load_task


@dataclass(frozen=True)
class TrialJob:
    task_dir: str
    """Absolute path of the task directory (the same path on every node)."""
    task_id: str
    attempt: int
    retry_index: int
    agent: ModelAgent
    run_id: str = ""
    """Labels the trial's containers (``termgrade.run``): a resumed run reaps its own."""
    job_id: str | None = None
    """The grading run's id (:mod:`termgrade.grade.runs`): the record's ``job_id`` and the
    start of its ``trial_id``."""


def make_ahead_for(job: TrialJob) -> bool:
    """Have the warm pool (:mod:`termgrade.scoring.warm`) make the containers of ``job``'s
    trial in the background, under its run id; False when the pool is full."""

    def _make() -> Pair:
        task = load_task(Path(job.task_dir))
        spec, closure, procs = scoring_setup(task, image_for(task))
        return make_pair(task, spec, closure, procs, f"{task.safe_name}-warm")

    with run_scope(job.run_id):
        return WARM.make_ahead(job.task_dir, _make)


def run_job(job: TrialJob) -> TrialRecord:
    started = datetime.now(UTC)
    attestable = None
    try:
        task = load_task(Path(job.task_dir))
        attestable = attestability(task)
        image = image_for(task)
    except TermGradeError as exc:
        outcome = RunOutcome(job.agent.name, None, error=f"before the agent started: {exc}",
                             attested=attestable is None or attestable.attested)
    else:
        with run_scope(job.run_id):
            outcome = run_task(task, image, job.agent, attestable=attestable)
    return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                         retry_index=job.retry_index, outcome=outcome, started_at=started,
                         finished_at=datetime.now(UTC), job_id=job.job_id,
                         scaffold=job.agent.scaffold)
