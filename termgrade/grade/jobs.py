"""One trial as a unit of work an executor runs anywhere: locally or on a Ray node.

:func:`run_job` builds the task's image on the machine it runs on (once per process;
Docker's layer cache makes later builds on the node cheap), runs the trial through the
grader and returns its record. It never raises for an infrastructure failure: that comes
back as an uncounted record, which the runner retries.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from termgrade.agent.kinds import ModelAgent
from termgrade.audit.attestable import attestability
from termgrade.core.errors import TermGradeError
from termgrade.grade.record import graded_record
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.ownership import run_scope
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import Task, load_task
from termgrade.task.digest import task_digest


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


_IMAGES: dict[tuple[str, str], str] = {}
_IMAGES_LOCK = threading.Lock()
_BUILD_LOCKS: dict[str, threading.Lock] = {}


def image_for(task: Task) -> str:
    """The task's image on this machine, built once per process and task version."""
    from termgrade.sandbox.images import build_task_image

    key = (str(task.paths.root), task_digest(task.paths.root))
    with _IMAGES_LOCK:
        if key in _IMAGES:
            return _IMAGES[key]
        lock = _BUILD_LOCKS.setdefault(key[0], threading.Lock())
    with lock:
        with _IMAGES_LOCK:
            if key in _IMAGES:
                return _IMAGES[key]
        built = build_task_image(task)
        with _IMAGES_LOCK:
            _IMAGES[key] = built.tag
        return built.tag


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
