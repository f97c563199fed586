"""``termgrade grade``: k attempts per task of one model, scored by the grader, journaled.

The runner owns everything that must be exact: which attempts to run (fixed k, or adaptive
until each task's band is decided), the journal (``DIR/trials.jsonl``: a killed run
resumes without redoing or duplicating a trial), retries of trials lost to infrastructure
(each loss is recorded uncounted and the attempt is run again, up to a limit), and the
progress display. Where trials run is the pool's business (:mod:`termgrade.pools.executors`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from termgrade.agent.kinds import ModelAgent
from termgrade.agent.probe import probe_endpoint
from termgrade.agent.scaffolds import scaffold_for
from termgrade.core.errors import TermGradeError
from termgrade.core.progress import track
from termgrade.grade.adaptive import AdaptiveRule, AdaptiveScheduler, AdaptiveSummary
from termgrade.grade.cleanup import leave_nothing, reap_run, run_label
from termgrade.grade.defaults import DEFAULT_K, DEFAULT_WORKERS
from termgrade.grade.errors import GradeAborted, GradeIncompleteError
from termgrade.grade.jobs import BUILD_FAILED, TrialJob, make_ahead_for, run_job
from termgrade.grade.journal import TRIALS_FILE, TrialJournal, refuse_unreadable
from termgrade.grade.preflight import ImagePolicy, nothing_left, split_by_image
from termgrade.grade.record import ENDPOINT_UNUSABLE, SOURCE, trial_id
from termgrade.grade.reuse import (
    adopt_kept,
    apply_reuse,
    load_earlier,
    plan_reuse,
    scaffold_config,
    scaffold_digest,
)
from termgrade.grade.runs import (
    RunId,
    check_k,
    check_run_name,
    choose_run,
    note_run,
    run_record,
)
from termgrade.grade.summary import TaskTally, summarize_tasks
from termgrade.pools.executors import Pool, local_pool
from termgrade.records.journal import UnreadableLine
from termgrade.records.kept_work import WORK_DIR
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.ownership import run_scope
from termgrade.scoring.kept import DEFAULT_MAX_BYTES
from termgrade.scoring.pair.warm import WARM
from termgrade.scoring.reference import ReferenceRecord
from termgrade.task import discover_tasks
from termgrade.task.digest import restore_modes, task_digest
from termgrade.task.network import InternetPolicy, apply_internet_policy
from termgrade.verify.ensure import references_first

DEFAULT_MAX_LOSSES = 3


@dataclass
class GradeReport:
    trials_path: Path
    records: list[TrialRecord]
    """Every record of this model in the journal, resumed ones included."""
    resumed: int
    """Records found in the journal when the run started."""
    summary: AdaptiveSummary
    wall_s: float
    lost: int = 0
    """Trials of this run lost to infrastructure (recorded uncounted, retried)."""
    abandoned: list[str] = field(default_factory=list)
    """Tasks given up after too many infrastructure losses of one attempt."""
    reaped: int = 0
    """Containers an interrupted run of this output left, removed when this one started."""
    reused: int = 0
    """Trials copied from an earlier run (``--reuse``): unchanged task, model, scaffold."""
    reused_tasks: int = 0
    """Tasks with a reused trial."""
    rerun: dict[str, str] = field(default_factory=dict)
    """Tasks whose earlier trials were not reused, and why (``--reuse``)."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Tasks left out by ``--internet-tasks skip`` or ``--missing-images skip``, and why."""
    unreadable: list[UnreadableLine] = field(default_factory=list)
    """Journal lines this TermGrade cannot read (a newer version, a bad field): kept in the
    file, untouched, and not resumed."""
    run: RunId | None = None
    """The run written: its id (``job_id``), its name, whether it was resumed."""
    build_failed: dict[str, str] = field(default_factory=dict)
    """Tasks whose image did not build, with the failing step and its first error line:
    given up at once (no retry, no trial journaled, not an infrastructure loss)."""

    @property
    def graded(self) -> int:
        """Trials this run graded itself (neither resumed nor reused; losses included)."""
        return len(self.records) - self.resumed - self.reused

    @property
    def counted(self) -> list[TrialRecord]:
        return [r for r in self.records if r.counted]

    @property
    def tasks(self) -> list[TaskTally]:
        """Per task: counted, passed, rate, band, lost, HTTP retries (resumed included)."""
        return summarize_tasks(self.records)

    @property
    def pass_rate(self) -> float | None:
        counted = self.counted
        return sum(r.passed for r in counted) / len(counted) if counted else None

    def check(self) -> None:
        """Raise :class:`GradeIncompleteError` when the run measured nothing (no counted
        trial) or gave up on tasks; the message names the cause and the fix."""
        fix = (f"read exception_message in {self.trials_path}, fix the cause (engine, "
               "endpoint, disk), then rerun the same command: it resumes")
        refuse_unreadable(self.unreadable, self.trials_path, finished=True)
        if self.build_failed:
            task_id, why = sorted(self.build_failed.items())[0]
            raise GradeIncompleteError(
                f"{len(self.build_failed)} task(s) did not build ({BUILD_FAILED}), not "
                f"graded; first: {task_id}: {why.removeprefix(BUILD_FAILED + ': ')}",
                fix=f"fix the task's environment/Dockerfile (`termgrade verify "
                f"{task_id}` shows the same step), then rerun the same command: it resumes")
        cause = _last_loss(self.records)
        if not self.counted:
            lost = sum(1 for r in self.records if not r.counted)
            raise GradeIncompleteError(
                f"no trial was counted: {lost} trial(s) lost to infrastructure"
                + (f" (last: {cause})" if cause else ""), fix=fix)
        if self.abandoned:
            shown = ", ".join(self.abandoned[:_SHOWN]) + (
                f" and {len(self.abandoned) - _SHOWN} more"
                if len(self.abandoned) > _SHOWN else "")
            raise GradeIncompleteError(
                f"{len(self.abandoned)} task(s) lost after repeated infrastructure losses "
                f"of one attempt: {shown}" + (f" (last: {cause})" if cause else ""), fix=fix)


_SHOWN = 5


def _last_loss(records: Sequence[TrialRecord]) -> str | None:
    """The first line of the last uncounted trial's exception, shortened."""
    for record in reversed(records):
        if not record.counted and record.exception_message:
            line = record.exception_message.strip().splitlines()[0] if \
                record.exception_message.strip() else ""
            return line[:200] + ("..." if len(line) > 200 else "")
    return None


@dataclass
class _Attempts:
    """Per task: the next fresh attempt index and the lost attempts to run again."""

    next_fresh: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    again: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))

    def take(self, task_id: str) -> tuple[int, int]:
        if self.again[task_id]:
            return self.again[task_id].pop(0)
        attempt = self.next_fresh[task_id]
        self.next_fresh[task_id] += 1
        return attempt, 0


def _rebuild(records: Sequence[TrialRecord], max_losses: int
             ) -> tuple[dict[str, tuple[int, int]], _Attempts, set[str]]:
    """From journaled records: results so far, attempts to rerun, tasks given up."""
    done: dict[str, tuple[int, int]] = defaultdict(lambda: (0, 0))
    attempts = _Attempts()
    counted_attempts: set[tuple[str, int]] = set()
    losses: dict[tuple[str, int], int] = defaultdict(int)
    for record in records:
        key = (record.task_id, record.attempt)
        attempts.next_fresh[record.task_id] = max(attempts.next_fresh[record.task_id],
                                                  record.attempt + 1)
        if record.counted:
            if key not in counted_attempts:
                counted_attempts.add(key)
                passed, n = done[record.task_id]
                done[record.task_id] = (passed + int(record.passed), n + 1)
        else:
            losses[key] = max(losses[key], record.retry_index + 1)
    abandoned: set[str] = set()
    for (task_id, attempt), lost in sorted(losses.items()):
        if (task_id, attempt) in counted_attempts:
            continue
        if lost > max_losses:
            abandoned.add(task_id)
        else:
            attempts.again[task_id].append((attempt, lost))
    return dict(done), attempts, abandoned


def _lost(job: TrialJob, error: BaseException) -> TrialRecord:
    """The record of a trial whose executor failed (a dead worker, a crashed node)."""
    now = datetime.now(UTC)
    return TrialRecord(
        trial_id=trial_id(job.task_id, job.agent.name, job.attempt, job.retry_index,
                          job.job_id), job_id=job.job_id,
        task_id=job.task_id, model=job.agent.name, scaffold=job.agent.scaffold,
        attempt=job.attempt, reward=None, passed=False, counted=False, started_at=now,
        finished_at=now, exception_type="InfrastructureError",
        exception_message=f"the executor lost the trial: {type(error).__name__}: {error}",
        retry_index=job.retry_index, source=SOURCE,
        retry_of=(trial_id(job.task_id, job.agent.name, job.attempt, job.retry_index - 1,
                           job.job_id) if job.retry_index else None))


UNREACHABLE = "nothing answers after"
"""What the client's message says when the endpoint stopped answering (connections
refused or timed out, try after try), as against an endpoint that answers with a refusal."""


def aborted(url: str, message: str) -> GradeAborted:
    """The one thing a run stopped by its endpoint says, with what to do: a dead endpoint
    is restarted and the run resumed; one that refuses every request is misconfigured."""
    if UNREACHABLE in message:
        said = message.removeprefix(f"{url}: ").split(" (check that")[0]
        return GradeAborted(f"{url} stopped answering mid-run: {said}",
                            fix="restart it (or correct --base-url), then rerun the same "
                            "command to resume: finished trials are kept")
    return GradeAborted(f"{url} refuses every request: {message}",
                        fix="check --model, --base-url and the API key variable, then rerun "
                        "the same command to resume: finished trials are kept")


def grade_model(task_roots: Sequence[Path], agent: ModelAgent, out_dir: Path, *, k: int = DEFAULT_K,
          adaptive: AdaptiveRule | None = None, pool: Pool | None = None,
          workers: int = DEFAULT_WORKERS,
          max_losses: int = DEFAULT_MAX_LOSSES, progress: bool | None = None,
          internet_tasks: InternetPolicy = "refuse", missing_images: ImagePolicy = "refuse",
          run: Callable[[TrialJob], TrialRecord] = run_job,
          on_start: Callable[[int], None] | None = None,
          reuse: Path | None = None, run_name: str | None = None,
          keep_work: bool = False, keep_work_max_bytes: int = DEFAULT_MAX_BYTES,
          on_note: Callable[[str], None] | None = None
          ) -> GradeReport:
    """Grade ``agent`` on every task under ``task_roots``; see the module docstring.

    ``adaptive``: stop a task once its band is decided (its ``k_max`` replaces ``k``).
    ``pool``: where trials run (default: ``workers`` local threads). ``internet_tasks``:
    what to do with tasks that ask for the network (:mod:`termgrade.task.network`).
    ``missing_images``: what to do with tasks whose FROM image is neither here nor
    pullable, checked up front when the trials build here (:mod:`.preflight`). Then the
    endpoint is probed (:mod:`termgrade.agent.probe`): one that no trial could use raises
    :class:`~termgrade.agent.errors.EndpointUnusableError` before any container starts.
    ``run``: the trial runner (a seam for tests; it must be picklable for a Ray pool).
    ``on_start``: called once, before the first trial, with the trials that will run at
    once (the pool's slots, or fewer when fewer trials are left to run).
    ``reuse``: an earlier run's folder: its trials of unchanged task, model and scaffold
    are copied into this run's journal and not graded again (:mod:`.reuse`).
    ``run_name``: the run to write (resumed when ``out_dir`` holds it, else started);
    without it, the last run of this model in ``out_dir`` resumes (:mod:`.runs`).
    ``keep_work``: keep each trial's carried work in ``out_dir/work`` (at most
    ``keep_work_max_bytes`` a trial) for ``termgrade regrade`` (:mod:`termgrade.scoring.kept`).
    Before any trial, each task with a reference solution gets its reference record: the
    recorded one, else its reference is run once on this machine first (its containers
    labelled as the run's), or the run refuses, naming ``termgrade verify``; every trial,
    on this machine or a Ray node, is judged with that record. Tasks without one are
    named once, through ``on_note`` (:func:`termgrade.verify.ensure.references_first`),
    which also hears of each reference run.
    """
    if run_name is not None:
        check_run_name(run_name)
    try:
        # A scaffold named as module:Class is registered (here) and recorded by its name.
        agent = replace(agent, scaffold=scaffold_for(agent.scaffold).name)
        found = {path.name: path.resolve() for path in discover_tasks(*task_roots)}
        task_dirs = apply_internet_policy(found, internet_tasks)
        skipped = dict.fromkeys(found.keys() - task_dirs.keys(),
                                "asks for the network (allow_internet = true)")
        if run is run_job and (pool is None or pool.where == "local"):
            task_dirs, lacking = split_by_image(task_dirs, missing_images)
            skipped.update(lacking)
        if skipped and not task_dirs:
            raise nothing_left(skipped)
        if run is run_job:
            probe_endpoint(agent.endpoint, scaffold_for(agent.scaffold).tools)
        for path in task_dirs.values():  # a downloaded repo's tasks: the modes they were built with
            restore_modes(path)
        references: dict[str, ReferenceRecord | None] = {}
        if run is run_job:  # never grade a task that has a solution without its record
            with run_scope(run_label(out_dir / TRIALS_FILE, agent.name)):
                references = references_first(
                    task_dirs, here=pool is None or pool.where == "local", say=on_note)
    except TermGradeError:
        if pool is not None:
            pool.shutdown()
        raise
    rule = adaptive or AdaptiveRule(k_min=k, k_max=k)
    journal = TrialJournal(out_dir / TRIALS_FILE)
    digests = {task_id: task_digest(path) for task_id, path in task_dirs.items()}
    this_run = choose_run(journal.load(), model=agent.name, scaffold=agent.scaffold,
                          name=run_name)
    try:
        refuse_unreadable(journal.unreadable, journal.path)
        check_k(out_dir, this_run, rule)
    except TermGradeError:
        if pool is not None:
            pool.shutdown()
        raise
    stamp = _Stamp(digests, scaffold_digest(agent), scaffold_config(agent), this_run,
                   scaffold_for(agent.scaffold).version)
    note_run(out_dir, run_record(this_run, model=agent.name, endpoint=agent.endpoint.base_url,
                                 rule=rule, scaffold=agent.scaffold,
                                 scaffold_version=stamp.scaffold_version,
                                 scaffold_digest=stamp.scaffold_digest, tasks=len(task_dirs)))
    reused, reused_tasks, rerun = 0, 0, {}
    if reuse is not None:
        plan = plan_reuse(load_earlier(reuse, out_dir), model=agent.name,
                          scaffold=agent.scaffold, scaffold_digest=stamp.scaffold_digest,
                          task_digests=digests, k_max=rule.k_max)
        plan.records = [stamp.join(r) for r in plan.records]
        reused, reused_tasks, rerun = apply_reuse(plan, journal), len(plan.tasks), plan.changed
        if keep_work:
            adopt_kept(plan, reuse, out_dir)
    run_id = run_label(journal.path, agent.name)
    kept_in = str((out_dir / WORK_DIR).resolve()) if keep_work else None
    containers_here = run is run_job and (pool is None or pool.where == "local")
    reaped = reap_run(run_id) if containers_here else 0
    previous = [r for r in journal.load()
                if r.model == agent.name and r.scaffold == agent.scaffold
                and r.task_id in task_dirs and r.job_id == this_run.job_id]
    done, attempts, abandoned = _rebuild(previous, max_losses)
    scheduler = AdaptiveScheduler(sorted(task_dirs), rule, done=done)
    for task_id in abandoned:
        scheduler.abandon(task_id)
    pool = pool or local_pool(workers)
    records = list(previous)
    began = time.monotonic()
    lost = 0
    running: dict[Future[TrialRecord], TrialJob] = {}
    resumed_counted = sum(n for _, n in done.values())
    total = len(task_dirs) * rule.k_max
    left = max(0, total - resumed_counted - sum(rule.k_max - done.get(t, (0, 0))[1]
                                                for t in abandoned))
    if on_start is not None:
        on_start(min(pool.slots, left))
    # Fixed k on this machine: one more attempt per slot is queued, and its containers are
    # made ahead by the warm pool while the running trials work (adaptive runs decide each
    # next attempt on the results, so they queue nothing).
    ahead = min(pool.slots, WARM.limit) if (containers_here and rule.k_min == rule.k_max
                                            and pool.where == "local") else 0
    counted: list[TrialRecord] = []
    """Counted trials of this run (the live rate leaves resumed ones out)."""
    build_failed: dict[str, str] = {}
    with track(f"grade {agent.name}", total=total, enabled=progress) as bar:
        for _ in range(resumed_counted):
            bar.advance()
        try:
            while True:
                free = pool.slots + ahead - len(running)
                for task_id in scheduler.next_attempts(free) if free > 0 else []:
                    attempt, retry = attempts.take(task_id)
                    job = TrialJob(str(task_dirs[task_id]), task_id, attempt, retry, agent,
                                   run_id, this_run.job_id, keep_work=kept_in,
                                   keep_work_max_bytes=keep_work_max_bytes,
                                   reference=references.get(task_id))
                    if len(running) >= pool.slots:  # queued behind the running trials
                        make_ahead_for(job)
                    running[pool.executor.submit(run, job)] = job
                if not running:
                    break
                finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in finished:
                    job = running.pop(future)
                    try:
                        record = future.result()
                    except Exception as exc:  # the executor lost it: never a task failure
                        record = _lost(job, exc)
                    record = stamp(record)
                    if record.exception_type == BUILD_FAILED:  # the task's, not a loss
                        scheduler.release(job.task_id)
                        scheduler.abandon(job.task_id)
                        build_failed.setdefault(job.task_id, record.exception_message or "")
                        continue
                    journal.append(record)
                    records.append(record)
                    if record.counted:
                        scheduler.record(job.task_id, record.passed)
                        counted.append(record)
                        bar.advance(_status(agent.name, counted, lost, began))
                        continue
                    lost += 1
                    if record.exception_type == ENDPOINT_UNUSABLE:
                        raise aborted(agent.endpoint.url, record.exception_message or "")
                    scheduler.release(job.task_id)
                    if job.retry_index + 1 > max_losses:
                        scheduler.abandon(job.task_id)
                        abandoned.add(job.task_id)
                    else:
                        attempts.again[job.task_id].append((job.attempt, job.retry_index + 1))
        except BaseException:  # Ctrl-C, a dead endpoint (GradeAborted), any exception
            if containers_here:
                leave_nothing(run_id)
            raise
        finally:
            for pending in running:
                pending.cancel()
            pool.shutdown()
            if ahead:
                WARM.drain()
    return GradeReport(journal.path, records, len(previous) - reused, scheduler.summary(),
                       time.monotonic() - began, lost, sorted(abandoned), reaped, reused,
                       reused_tasks, rerun, skipped, journal.unreadable, this_run,
                       build_failed)


@dataclass(frozen=True)
class _Stamp:
    """Puts the task's digest, the scaffold's and the run's name on a record made without
    them."""

    task_digests: dict[str, str]
    scaffold_digest: str
    scaffold_config: str
    run: RunId
    scaffold_version: str

    def join(self, record: TrialRecord) -> TrialRecord:
        """An earlier run's trial as a member of this run (``--reuse``): its trial id,
        which names the run that graded it, is kept."""
        return record.model_copy(update={"job_id": self.run.job_id,
                                         "run_name": self.run.name})

    def __call__(self, record: TrialRecord) -> TrialRecord:
        update: dict[str, object] = {}
        if self.run.name is not None and record.run_name is None:
            update["run_name"] = self.run.name
        if record.task_digest is None and record.task_id in self.task_digests:
            update["task_digest"] = self.task_digests[record.task_id]
        if record.scaffold_digest is None:
            update["scaffold_digest"] = self.scaffold_digest
            update["scaffold_config"] = self.scaffold_config
        if record.scaffold_version is None and record.scaffold_digest in (
                None, self.scaffold_digest):
            update["scaffold_version"] = self.scaffold_version
        return record.model_copy(update=update) if update else record


def _status(model: str, counted: Sequence[TrialRecord], lost: int, began: float) -> str:
    """The live line: this run's counted trials only (resumed ones are not re-measured)."""
    passed = sum(r.passed for r in counted)
    hours = max(time.monotonic() - began, 1e-6) / 3600
    return (f"grade {model} [dim]this run: pass {passed}/{len(counted)} = "
            f"{passed / max(1, len(counted)):.2f} · {len(counted) / hours:.0f} trials/h · "
            f"{lost} lost")
