"""One trial as a unit of work an executor runs anywhere: locally or on a Ray node.

:func:`run_job` builds the task's image on the machine it runs on (once per process:
:mod:`termgrade.sandbox.image_cache`), runs the trial through the
grader and returns its record. It never raises for an infrastructure failure: that comes
back as an uncounted record, which the runner retries. A Dockerfile that fails its build
is the task's fault, not infrastructure: the record says ``build_failed`` with the failing
step (``verify``'s own reason), the process never builds that task version again, and the
runner gives the task up at once (:data:`BUILD_FAILED`).
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from termgrade.agent.kinds import ModelAgent
from termgrade.audit.attestable import attestability
from termgrade.core.errors import TermGradeError
from termgrade.grade.errors import BuildFailedError
from termgrade.grade.record import graded_record
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.errors import ImageBuildError, MissingImageError
from termgrade.sandbox.image_cache import image_for
from termgrade.sandbox.ownership import run_scope
from termgrade.scoring.kept import DEFAULT_MAX_BYTES, KeptLayer, WorkStore
from termgrade.scoring.pair.containers import Pair, make_pair
from termgrade.scoring.pair.warm import WARM
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.scoring.trial import RunOutcome, run_task, scoring_setup
from termgrade.task import Task, load_task
from termgrade.task.digest import agent_side_digest, task_digest


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
    keep_work: str | None = None
    """``grade --keep-work``: the run's work store (``DIR/work``), where the trial's carried
    work is kept for ``termgrade regrade``; None: not kept."""
    keep_work_max_bytes: int = DEFAULT_MAX_BYTES
    """The bound on one trial's kept work."""
    reference: ReferenceRecord | None = None
    """The task's reference record, found (or made) where the run started
    (:func:`termgrade.verify.ensure.references_first`): a trial on another node is judged
    with it too. None: the node's own (:func:`~termgrade.scoring.reference.reference_for`)."""


def make_ahead_for(job: TrialJob) -> bool:
    """Have the warm pool (:mod:`termgrade.scoring.pair.warm`) make the containers of ``job``'s
    trial in the background, under its run id; False when the pool is full."""

    def _make() -> Pair:
        task = load_task(Path(job.task_dir))
        spec, closure, procs = scoring_setup(task, built_image(task))
        return make_pair(task, spec, closure, procs, f"{task.safe_name}-warm")

    with run_scope(job.run_id):
        return WARM.make_ahead(job.task_dir, _make)


def run_job(job: TrialJob) -> TrialRecord:
    started = datetime.now(UTC)
    attestable = None
    try:
        task = load_task(Path(job.task_dir))
        reference = job.reference or reference_for(task)  # found once, for both
        attestable = attestability(task, reference)
        image = built_image(task)
    except BuildFailedError as exc:
        outcome = RunOutcome(job.agent.name, None, error=f"{BUILD_FAILED}: {exc}",
                             attested=attestable is None or attestable.attested)
    except TermGradeError as exc:
        outcome = RunOutcome(job.agent.name, None, error=f"before the agent started: {exc}",
                             attested=attestable is None or attestable.attested)
    else:
        with run_scope(job.run_id):
            outcome = run_task(task, image, job.agent, attestable=attestable,
                               keep_work=store_of(job), reference=reference)
    record = graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                           retry_index=job.retry_index, outcome=outcome, started_at=started,
                           finished_at=datetime.now(UTC), job_id=job.job_id,
                           scaffold=job.agent.scaffold)
    if (outcome.error or "").startswith(f"{BUILD_FAILED}: "):
        record.exception_type = BUILD_FAILED
    store = store_of(job)
    if store is not None and record.counted:
        # keeping never changes a grade: a manifest that cannot be written leaves the trial
        # without kept work (regrade lists it as must-rerun)
        with contextlib.suppress(OSError, TermGradeError):
            keep_manifest(store, record, outcome.kept, Path(job.task_dir))
    return record


BUILD_FAILED = "build_failed"
"""``exception_type`` of a trial whose task image did not build: its message is
``build_failed: step 2/3 `RUN chmdo +x /app/data` exited 127: /bin/sh: 1: chmdo: not found``."""

_FAILED_BUILDS: dict[tuple[str, str], str] = {}
_BUILDS_LOCK = threading.Lock()
_TASK_LOCKS: dict[str, threading.Lock] = {}


def build_failure(exc: ImageBuildError) -> str | None:
    """The failing step of a Dockerfile that does not build (``verify``'s reason), or None
    when the build failed for another cause (a FROM image missing, a build past its time,
    an interrupted build, an engine error that names no step): those stay infrastructure."""
    if isinstance(exc, MissingImageError) or (exc.fix or "").startswith(
            ("the build ran past", "the build was stopped")):
        return None
    from termgrade.verify.reasons import build_reason

    return build_reason(exc.log_tail)


def built_image(task: Task) -> str:
    """:func:`image_for`, except that a task version whose Dockerfile failed a step in this
    process raises :class:`BuildFailedError` again at once: concurrent and later attempts
    (and the warm pool) never rebuild it."""
    key = (str(task.paths.root), task_digest(task.paths.root))
    with _BUILDS_LOCK:
        lock = _TASK_LOCKS.setdefault(key[0], threading.Lock())
    with lock:
        if key in _FAILED_BUILDS:
            raise BuildFailedError(_FAILED_BUILDS[key])
        try:
            return image_for(task)
        except ImageBuildError as exc:
            reason = build_failure(exc)
            if reason is None:
                raise
            _FAILED_BUILDS[key] = reason
            raise BuildFailedError(reason) from exc


def store_of(job: TrialJob) -> WorkStore | None:
    return WorkStore(Path(job.keep_work), job.keep_work_max_bytes) if job.keep_work else None


def keep_manifest(store: WorkStore, record: TrialRecord, kept: KeptLayer | None,
                  task_dir: Path) -> Path:
    """The manifest of ``record``'s kept work, named by its trial id. A counted trial that
    was scored before anything was carried (over its disk limit, say) keeps none and says
    why: regrading it needs a rerun."""
    kept = kept or KeptLayer(reason="scored before its work was carried"
                             + (f" ({record.exception_message})"
                                if record.exception_message else ""))
    digests: tuple[str | None, str | None]
    try:
        digests = (task_digest(task_dir), agent_side_digest(task_dir))
    except (OSError, TermGradeError):
        digests = (None, None)
    return store.write(kept.manifest(trial_id=record.trial_id, task_id=record.task_id,
                                     task_digest=digests[0], agent_side_digest=digests[1]))
