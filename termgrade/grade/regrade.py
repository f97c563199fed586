"""``termgrade regrade``: a recorded run scored again against changed tests, no agent run.

A run graded with ``grade --keep-work`` kept each trial's carried work
(:mod:`termgrade.scoring.kept`). After a test is fixed (or broken), :func:`regrade_run`
scores that work again against the tasks as they are now (:mod:`termgrade.scoring.replay`:
grading's own path, with the kept work where the agent's container layer would be) and
writes the verdicts as a **new run** in another output folder: its own ``job_id``, a run
record that names the source run (``regrade_of``) and copies its plan, model and scaffold,
and one trial per regraded trial (``regraded_from``), with the source trial's agent side
(messages, tokens, turns) and the new verdicts. ``labels``, ``report`` and ``view`` read it
like any run. The source folder is only read, never written (its journal is read without
resuming).

A trial is **regraded** when its work was kept whole and what the agent saw (the
instruction, the environment, task.toml outside ``[verifier]``) is unchanged; otherwise it
**must be rerun** and is listed with the reason, never scored 0 or dropped. Trials the
source did not count (lost to infrastructure) are not regraded. The new folder's journal
resumes like ``grade``'s: a killed regrade continues where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from termgrade.audit.attestable import attestability
from termgrade.core.errors import OptionError, RecordError, TermGradeError
from termgrade.core.progress import track
from termgrade.grade.cleanup import leave_nothing, reap_run, run_label
from termgrade.grade.jobs import keep_manifest
from termgrade.grade.journal import TRIALS_FILE, TrialJournal, refuse_unreadable
from termgrade.grade.record import graded_record, trial_id
from termgrade.grade.runs import check_run_name, new_job_id, note_run
from termgrade.records.journal import read_journal
from termgrade.records.kept_work import WORK_DIR, KeptWork
from termgrade.records.roles import Role, fields_with
from termgrade.records.run import RunRecord, read_runs
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.ownership import run_scope
from termgrade.scoring.errors import KeptWorkError
from termgrade.scoring.kept import WorkStore
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.attestable import Attestability
from termgrade.task import Task, discover_tasks, load_task
from termgrade.task.digest import agent_side_digest, task_digest

SOURCE = "termgrade regrade"
MAX_TRIES = 3
"""Tries of one trial's regrade lost to infrastructure (unscored) before it is left lost."""
SCORED = fields_with(TrialRecord, Role.SCORED)
"""A regraded trial's fields that come from the new scoring (declared ``Role.SCORED`` on
the record); the rest are the source's, but for the new run's identity (:func:`regraded`)."""


@dataclass
class RegradeReport:
    out_dir: Path
    source_job_id: str | None
    job_id: str
    records: list[TrialRecord] = field(default_factory=list)
    """The regraded trials (resumed ones included), in the source's order."""
    source: dict[str, TrialRecord] = field(default_factory=dict)
    """The source trials regraded, by trial id."""
    must_rerun: dict[str, str] = field(default_factory=dict)
    """Source trial id -> why its work cannot be regraded (not kept, over the bound, the
    task's instruction or environment changed)."""
    not_asked: list[str] = field(default_factory=list)
    """Source trial ids of tasks not under --tasks: not asked for, left as they are."""
    refused: dict[str, str] = field(default_factory=dict)
    """Source trial id -> why its kept work was refused (a blob that is not its bytes)."""
    lost: dict[str, str] = field(default_factory=dict)
    """Source trial id -> the infrastructure failure that left its regrade unscored."""
    resumed: int = 0

    @property
    def trials_path(self) -> Path:
        return self.out_dir / TRIALS_FILE

    def changed(self) -> list[tuple[TrialRecord, TrialRecord]]:
        """(source, regraded) pairs whose reward or any test's outcome differs."""
        pairs = []
        for record in self.records:
            before = self.source.get(record.regraded_from or "")
            if before is not None and (before.reward != record.reward
                                       or _outcomes(before) != _outcomes(record)):
                pairs.append((before, record))
        return pairs

    def check(self) -> None:
        """:class:`RegradeIncompleteError` when a kept trial was refused or lost, or nothing
        could be regraded at all."""
        from termgrade.grade.errors import RegradeIncompleteError

        if self.refused or self.lost:
            first = next(iter({**self.refused, **self.lost}.items()))
            raise RegradeIncompleteError(
                f"{len(self.refused)} trial(s) refused and {len(self.lost)} lost; first: "
                f"{first[0]}: {first[1]}",
                fix="a refused trial's kept work was changed after grading (restore it or "
                "rerun the trial); a lost one: fix the engine and rerun the same command, "
                "it resumes")
        if not self.records and not self.must_rerun:
            raise RegradeIncompleteError(
                f"nothing was regraded: none of the run's {len(self.not_asked)} trial(s) "
                "is of a task under --tasks",
                fix="pass the folders of the run's tasks (with their changed tests) to "
                "--tasks")
        if not self.records:
            raise RegradeIncompleteError(
                f"nothing was regraded: {len(self.must_rerun)} trial(s) must be rerun",
                fix="grade with --keep-work to keep the agents' work, then regrade")


def _outcomes(record: TrialRecord) -> dict[str, str]:
    return {t.name: str(t.outcome) for t in record.tests}


def source_run(source: Path, run: str | None) -> tuple[list[TrialRecord], RunRecord | None]:
    """The counted and uncounted trials of the run ``run`` (a job id or run name; default:
    the folder's only run) in the ``grade`` output folder ``source``, read without touching
    it, and its run record."""
    path = source / TRIALS_FILE
    if not path.is_file():
        raise OptionError(f"{source}: no {TRIALS_FILE} here",
                          fix="pass the output folder (-o) of a `termgrade grade` run")
    read = read_journal(path, TrialRecord, resume=False)
    refuse_unreadable(read.unreadable, path)
    records = read.records
    runs: dict[str | None, list[TrialRecord]] = {}
    for record in records:
        runs.setdefault(record.job_id, []).append(record)
    if run is not None:
        chosen = [key for key, trials in runs.items()
                  if run in (key, trials[-1].run_name)]
    else:
        chosen = list(runs)
    if len(chosen) != 1:
        named = ", ".join(f"{key} ({trials[-1].run_name or 'unnamed'}, {trials[-1].model})"
                          for key, trials in runs.items())
        what = f"no run {run!r}" if run and not chosen else "several runs"
        raise OptionError(f"{source}: {what} among: {named or 'none'}",
                          fix="name the run to regrade with --run JOB_ID_OR_NAME "
                          "(`termgrade runs` lists them)")
    key = chosen[0]
    return runs[key], read_runs([source]).get(key) if key else None


def _check_out(source: Path, out_dir: Path) -> None:
    src, out = source.resolve(), out_dir.resolve()
    if out == src or out.is_relative_to(src):
        raise OptionError(f"-o {out_dir}: inside the source folder {source}",
                          fix="write the regrade to a folder of its own: the source is never "
                          "written")


def _regrade_record(run: RunRecord | None, trials: Sequence[TrialRecord], job_id: str,
                    name: str | None, tasks: int) -> RunRecord:
    plan = run.model_dump(exclude={"job_id", "run_name", "tasks", "started_at",
                                   "termgrade_version", "regrade_of", "schema_version"}) \
        if run is not None else _guessed_plan(trials)
    from termgrade.core.version import __version__

    return RunRecord(job_id=job_id, run_name=name, tasks=tasks, started_at=datetime.now(UTC),
                     termgrade_version=__version__,
                     regrade_of=(run.job_id if run else trials[0].job_id), **plan)


def _guessed_plan(trials: Sequence[TrialRecord]) -> dict[str, object]:
    """A run from before run records: its plan as its trials show it."""
    k = max(t.attempt for t in trials) + 1
    return {"model": trials[0].model, "endpoint": "(not recorded)",
            "scaffold": trials[0].scaffold, "scaffold_version": trials[0].scaffold_version,
            "scaffold_digest": trials[0].scaffold_digest, "k": k, "k_min": k,
            "adaptive": False, "confidence": None}


@dataclass(frozen=True)
class _Job:
    source: TrialRecord
    task: Path
    work: KeptWork
    attestable: Attestability


Regrader = Callable[[Task, KeptWork, WorkStore, Attestability, WorkStore], RunOutcome]


def _regrade(task: Task, work: KeptWork, store: WorkStore, attestable: Attestability,
             keep: WorkStore) -> RunOutcome:
    from termgrade.sandbox.image_cache import image_for
    from termgrade.scoring.replay import regrade_task

    return regrade_task(task, image_for(task), work, store, attestable=attestable,
                        keep_work=keep)


def regrade_run(source: Path, tasks: Sequence[Path], out_dir: Path, *,
                run: str | None = None, run_name: str | None = None, workers: int = 2,
                progress: bool | None = None, regrade: Regrader = _regrade) -> RegradeReport:
    """Regrade the run ``run`` of the ``grade`` output folder ``source`` against the tasks
    under ``tasks`` into the new folder ``out_dir`` (see the module's doc). ``regrade``:
    one trial's scoring (a seam for tests; default: the real grader)."""
    source, out_dir = Path(source), Path(out_dir)
    if run_name is not None:
        check_run_name(run_name)
    _check_out(source, out_dir)
    trials, run_record = source_run(source, run)
    found = {path.name: path for path in discover_tasks(*tasks)}
    store = WorkStore.of_run(source)
    journal = TrialJournal(out_dir / TRIALS_FILE)
    earlier = read_runs([out_dir]) if out_dir.is_dir() else {}
    source_id = run_record.job_id if run_record else trials[0].job_id
    ongoing = [r for r in earlier.values() if r.regrade_of == source_id and r.regrade_of]
    job_id = ongoing[-1].job_id if ongoing else new_job_id(run_name or "regrade")
    done = {r.regraded_from: r for r in journal.load() if r.job_id == job_id and r.counted}
    refuse_unreadable(journal.unreadable, journal.path)
    report = RegradeReport(out_dir, source_id, job_id, resumed=len(done))
    jobs = _plan(trials, found, store, report, done)
    name = run_name or (ongoing[-1].run_name if ongoing else None)
    keep = WorkStore(out_dir / WORK_DIR, store.max_bytes)
    out_dir.mkdir(parents=True, exist_ok=True)
    note_run(out_dir, _regrade_record(run_record, trials, job_id, name,
                                      len({t.task_id for t in trials if t.counted})))
    new: dict[str, TrialRecord] = {}
    containers = run_label(journal.path, trials[0].model)  # as grade's: reaped, left nothing
    reap_run(containers)
    with track(f"regrade {trials[0].model}", total=len(jobs), enabled=progress) as bar, \
            ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(_one, job, store, regrade, job_id, name, keep, containers): job
                   for job in jobs}
        try:
            for future in as_completed(futures):
                job = futures[future]
                try:
                    record = future.result()
                except KeptWorkError as exc:
                    report.refused[job.source.trial_id] = str(exc).splitlines()[0]
                else:
                    if record.counted:  # a lost one is not journaled: the next run tries it
                        journal.append(record)
                        new[job.source.trial_id] = record
                    else:
                        report.lost[job.source.trial_id] = (record.exception_message
                                                            or "unscored")
                bar.advance()
        except BaseException:  # Ctrl-C, a bug: no container of the regrade is left
            for pending in futures:
                pending.cancel()
            leave_nothing(containers)
            raise
    ordered = {key: record for key, record in done.items() if key is not None} | new
    report.records = [ordered[t.trial_id] for t in trials if t.trial_id in ordered]
    return report


def _plan(trials: Sequence[TrialRecord], found: dict[str, Path], store: WorkStore,
          report: RegradeReport, done: dict[str | None, TrialRecord]) -> list[_Job]:
    """The trials to regrade now; the rest listed in ``report`` with their reason."""
    jobs = []
    digests: dict[str, str] = {}
    attestable: dict[str, Attestability] = {}  # here, not in the pool: CPython 3.11's
    # ast.parse is not thread-safe (the audit's static checks parse the tests)
    for record in trials:
        if not record.counted:
            continue
        report.source[record.trial_id] = record
        if record.trial_id in done:
            continue
        why = None
        task = found.get(record.task_id)
        if task is None:  # not asked for: not a trial to rerun
            report.not_asked.append(record.trial_id)
            continue
        try:
            work = store.read(record.trial_id)
        except RecordError as exc:  # a manifest edited into something else: not scored
            report.refused[record.trial_id] = str(exc).splitlines()[0]
            continue
        if work is None:
            why = "its work was not kept (graded without --keep-work)"
        elif not work.regradable:
            why = f"its work was not kept: {work.reason}"
        else:
            if record.task_id not in digests:
                digests[record.task_id] = agent_side_digest(task)
            if work.agent_side_digest != digests[record.task_id]:
                why = ("the task's instruction, environment or task.toml (outside "
                       "[verifier]) changed since it was graded: the agent would act "
                       "differently")
        if why is not None or work is None:
            report.must_rerun[record.trial_id] = why or "unknown"
            continue
        if record.task_id not in attestable:
            attestable[record.task_id] = attestability(load_task(task))
        jobs.append(_Job(record, task, work, attestable[record.task_id]))
    return jobs


def _one(job: _Job, store: WorkStore, regrade: Regrader, job_id: str, name: str | None,
         keep: WorkStore, containers: str) -> TrialRecord:
    """One trial regraded, its record made, and what reached its verifier kept in
    ``keep`` (the new run's store): a regrade run can be regraded in turn."""
    started = datetime.now(UTC)
    task = load_task(job.task)
    outcome = None
    for _ in range(MAX_TRIES):
        try:
            with run_scope(containers):
                outcome = regrade(task, job.work, store, job.attestable, keep)
        except KeptWorkError:
            raise
        except TermGradeError as exc:
            outcome = RunOutcome("regrade", None, error=f"before scoring: {exc}")
        if outcome.error is None:
            break
    assert outcome is not None
    record = regraded(job.source, outcome, job_id=job_id, run_name=name, started_at=started,
                      task_digest=task_digest(job.task))
    if record.counted:
        keep_manifest(keep, record, outcome.kept, job.task)
    return record


def regraded(source: TrialRecord, outcome: RunOutcome, *, job_id: str, run_name: str | None,
             started_at: datetime, task_digest: str | None) -> TrialRecord:
    """The regraded trial: the source's agent side, the new verdicts, a trial id of the
    new run."""
    scored = graded_record(task_id=source.task_id, model=source.model,
                           attempt=source.attempt, retry_index=0, outcome=outcome,
                           started_at=started_at, finished_at=datetime.now(UTC),
                           scaffold=source.scaffold, job_id=job_id)
    update = {name: getattr(scored, name) for name in SCORED}
    update.update(trial_id=trial_id(source.task_id, source.model, source.attempt, 0, job_id),
                  job_id=job_id, run_name=run_name, source=SOURCE, retry_of=None,
                  retry_index=0, regraded_from=source.trial_id, task_digest=task_digest)
    return source.model_copy(update=update)
