"""Grading runs as records: each ``termgrade grade`` run has an id, and a name a user gives.

A run's id (``job_id`` on each of its trials, and the start of each ``trial_id``) makes
trial ids unique across runs, so two runs of one model combine in ``labels``, ``report``
and ``view``. An output folder may hold several runs (one journal, ``trials.jsonl``):

- ``grade -o DIR`` resumes the last run of that model and scaffold in ``DIR``, or starts one;
- ``grade -o DIR --run-name NAME`` resumes the run named NAME there, or starts it.

Files written before runs had ids (no ``job_id``) resume under their old trial ids.
A run's own facts (``k``, adaptive stopping, model, endpoint, scaffold) are its
:class:`~termgrade.records.run.RunRecord` in ``DIR/runs.jsonl``, written by :func:`note_run`
when it starts. :func:`list_runs` is ``termgrade runs DIR``: what a folder holds, run by run.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from termgrade.core.errors import OptionError
from termgrade.core.journal import append_record
from termgrade.core.version import __version__
from termgrade.grade.journal import TRIALS_FILE
from termgrade.records.journal import UnreadableLine, read_journal
from termgrade.records.run import RUNS_FILE, RunRecord, read_runs
from termgrade.records.trial import TrialRecord

if TYPE_CHECKING:
    from termgrade.grade.adaptive import AdaptiveRule

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class RunId:
    """Which run a ``grade`` writes: its id (None: a file from before run ids) and name."""

    job_id: str | None
    name: str | None
    resumed: bool


def check_run_name(name: str) -> str:
    """``name`` if it can start a trial id; OptionError naming the rule otherwise."""
    if not _NAME.match(name):
        raise OptionError(f"--run-name {name!r}: a run name is 1-64 letters, digits, '.', "
                          "'_' or '-', starting with a letter or digit",
                          fix="pick a name like baseline or temp-1.0")
    return name


def new_job_id(name: str | None = None, now: datetime | None = None) -> str:
    """A fresh run id: the UTC start time, the name when given, a random tail."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return "-".join(part for part in (stamp, name, secrets.token_hex(3)) if part)


def choose_run(records: Sequence[TrialRecord], *, model: str, scaffold: str,
               name: str | None) -> RunId:
    """The run a ``grade`` of ``model`` continues in a journal holding ``records``, or a
    new one (see the module's doc)."""
    mine = [r for r in records if r.model == model and r.scaffold == scaffold]
    if name is not None:
        check_run_name(name)
        named = [r for r in mine if r.run_name == name]
        if named:
            return RunId(named[-1].job_id, name, True)
        return RunId(new_job_id(name), name, False)
    if mine:
        return RunId(mine[-1].job_id, mine[-1].run_name, True)
    return RunId(new_job_id(), None, False)


def check_k(out_dir: Path, run: RunId, rule: AdaptiveRule) -> None:
    """A resumed run keeps the attempts it planned: ``-k`` below its recorded ``k`` is
    refused (its journal holds attempts past the new k, and a record saying the smaller k
    would contradict them); a larger ``-k`` extends it."""
    if not run.resumed or run.job_id is None:
        return
    earlier = read_runs([out_dir]).get(run.job_id)
    if earlier is None or rule.k_max >= earlier.k:
        return
    named = f" --run-name {run.name}" if run.name else ""
    raise OptionError(
        f"-k {rule.k_max}: {out_dir} holds run {run.job_id}{named} of {earlier.model}, "
        f"which planned k={earlier.k}; a resume cannot plan fewer attempts (nothing was "
        "graded or written)",
        fix=f"rerun with -k {earlier.k} to resume that run, or grade k={rule.k_max} as a "
        "new run: add --run-name NAME (it is recorded beside the first in the same folder; "
        "labels reads each run's own k) or pass another -o folder")


def run_record(run: RunId, *, model: str, endpoint: str, rule: AdaptiveRule, scaffold: str,
               scaffold_digest: str | None, tasks: int, scaffold_version: str | None = None,
               now: datetime | None = None) -> RunRecord | None:
    """The record of ``run`` as it starts (None for a run from before run ids)."""
    if run.job_id is None:
        return None
    adaptive = rule.k_min < rule.k_max
    return RunRecord(job_id=run.job_id, run_name=run.name, model=model, endpoint=endpoint,
                     scaffold=scaffold, scaffold_version=scaffold_version,
                     scaffold_digest=scaffold_digest, k=rule.k_max, k_min=rule.k_min,
                     adaptive=adaptive, confidence=rule.confidence if adaptive else None,
                     tasks=tasks, started_at=now or datetime.now(UTC),
                     termgrade_version=__version__)


_RUNS_LOCK = threading.Lock()


def note_run(out_dir: Path, record: RunRecord | None) -> bool:
    """Append ``record`` to ``out_dir/runs.jsonl`` unless its run's latest record there says
    the same (a resume with the same plan writes nothing); True when it wrote."""
    if record is None:
        return False
    earlier = read_runs([out_dir]).get(record.job_id)
    if earlier is not None and earlier.same_plan(record):
        return False
    append_record(out_dir / RUNS_FILE, _RUNS_LOCK, record)
    return True


@dataclass
class RunSummary:
    """One run in an output folder (or the trials of a file from before run ids)."""

    trials_path: Path
    job_id: str | None
    name: str | None
    model: str
    scaffold: str
    configs: list[str] = field(default_factory=list)
    """The scaffold configurations (``scaffold_digest``, first 12 characters) it graded."""
    tasks: set[str] = field(default_factory=set)
    trials: int = 0
    counted: int = 0
    passed: int = 0
    reused: int = 0
    """Trials copied from an earlier run (``--reuse``): their trial id names that run."""
    by_attestation: dict[str, list[int]] = field(default_factory=dict)
    """Counted and passed trials (``[counted, passed]``) per :func:`attestation` kind:
    ``attested`` (the grader's signed record), ``unattested`` (test.sh's own reward) and
    ``unrecorded``; a vouched pass rate is never pooled with an unvouched one."""
    started: datetime | None = None
    """The run's own start: its record's, else its earliest own (not reused) trial's."""
    finished: datetime | None = None
    record: RunRecord | None = None
    """What the run planned (k, adaptive, endpoint): its record in ``runs.jsonl``; None for
    runs from before run records."""

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.counted if self.counted else None

    def rate(self, kind: str) -> float | None:
        """The pass rate over the counted trials of one attestation kind."""
        counted, passed = self.by_attestation.get(kind, [0, 0])
        return passed / counted if counted else None


ATTESTATION_KINDS = ("attested", "unattested", "unrecorded")


def attestation(value: bool | None) -> str:
    """A trial's ``attested`` as one of :data:`ATTESTATION_KINDS`."""
    return "unrecorded" if value is None else ("attested" if value else "unattested")


@dataclass
class FolderRuns:
    runs: list[RunSummary]
    unreadable: list[UnreadableLine]
    files: list[Path]


def _files(folder: Path) -> list[Path]:
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise OptionError(f"{folder}: no such folder",
                          fix="pass the output folder (-o) of a `termgrade grade` run")
    return sorted(p for p in folder.rglob(TRIALS_FILE) if p.is_file())


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def list_runs(folder: Path) -> FolderRuns:
    """The runs in ``folder`` (every ``trials.jsonl`` under it), in the order they
    started; reads only (a torn tail is reported, not moved)."""
    files = _files(folder)
    runs: dict[tuple[Path, str | None, str | None, str, str], RunSummary] = {}
    digests: dict[tuple[Path, str | None, str | None, str, str], set[str]] = defaultdict(set)
    earliest: dict[tuple[Path, str | None, str | None, str, str], datetime] = {}
    unreadable: list[UnreadableLine] = []
    for path in files:
        read = read_journal(path, TrialRecord, resume=False)
        unreadable += read.unreadable
        for r in read.records:
            key = (path, r.job_id, r.run_name, r.model, r.scaffold)
            run = runs.setdefault(key, RunSummary(path, r.job_id, r.run_name, r.model,
                                                  r.scaffold))
            run.trials += 1
            run.tasks.add(r.task_id)
            run.counted += int(r.counted)
            run.passed += int(r.counted and r.passed)
            if r.counted:
                tally = run.by_attestation.setdefault(attestation(r.attested), [0, 0])
                tally[0] += 1
                tally[1] += int(r.passed)
            reused = bool(r.job_id) and not r.trial_id.startswith(f"{r.job_id}__")
            run.reused += int(reused)
            if r.scaffold_digest:
                digests[key].add(r.scaffold_digest[:12])
            if r.started_at is not None:
                moment = _utc(r.started_at)
                earliest[key] = min(filter(None, (earliest.get(key), moment)))
                if not reused:  # a reused trial started in the run it was copied from
                    run.started = min(filter(None, (run.started, moment)))
            if r.finished_at is not None:
                run.finished = max(filter(None, (run.finished, _utc(r.finished_at))))
    records = read_runs(files)
    for key, run in runs.items():
        run.configs = sorted(digests[key])
        run.record = records.get(run.job_id) if run.job_id else None
        if run.record is not None:  # the run's own start, reused trials or not
            run.started = min(filter(None, (run.started, _utc(run.record.started_at))))
        elif run.started is None:  # only reused trials and no record: theirs
            run.started = earliest.get(key)
    far = datetime.max.replace(tzinfo=UTC)
    ordered = sorted(runs.values(), key=lambda r: (r.started or far, str(r.trials_path)))
    return FolderRuns(ordered, unreadable, files)
