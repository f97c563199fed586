"""``termgrade build trajectories``: every graded attempt, as SFT messages and full episodes.

Input: ``--trials`` (TrialRecord JSONL), read one line at a time, and the task dirs (for
the instruction and to refuse trials of unknown tasks). Memory is bounded by one row
group per config, however many trials go in. Output::

    README.md                                 card (templates/trajectories.md)
    data/sft/train-NNNNN-of-MMMMM.parquet      config "sft" (default)
    data/episodes/train-NNNNN-of-MMMMM.parquet config "episodes"
    figures/pass_rate_by_model.png
    data/traces/train-NNNNN-of-MMMMM.parquet   config "traces": the traces as rows
    traces/train/<task_id>/<trial_id>.jsonl   Hub agent traces (the trace viewer's files)
    atif/<task_id>/<trial_id>.json            with ``atif=True``: Harbor ATIF files

(:mod:`termgrade.builders.traces` documents the trace formats.)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from termgrade.builders.card_prose import load_card_prose
from termgrade.builders.common import staged_directory
from termgrade.builders.errors import BuildError
from termgrade.builders.inputs import (
    RecordSource,
    load_inputs,
    records_of,
    source_path,
)
from termgrade.builders.kinds import repo_kind
from termgrade.builders.layout import RepoPaths
from termgrade.builders.licensing import Origin, known_license
from termgrade.builders.parquet_writer import (
    FILE_BYTES,
    ROW_GROUP_BYTES,
    ROW_GROUP_ROWS,
    ParquetSplitWriter,
)
from termgrade.builders.rows import TraceRow, schema_for
from termgrade.builders.task_rows import DEFAULT_SPLIT, LEGACY_ROLES
from termgrade.builders.traces import TRACE_SPLIT, TraceWriter
from termgrade.builders.trajectories_card import TrajectoriesSummary as TrajectoriesSummary
from termgrade.builders.trajectories_card import render_trajectories_card
from termgrade.builders.trajectory_rows import chat_messages, trajectory_row
from termgrade.builders.trajectory_stats import TrajectoryStats
from termgrade.builders.trajectory_writer import TrajectoryWriter
from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import DataWarning, RecordError
from termgrade.core.progress import Tracker, track
from termgrade.records import LabelRow, TrialRecord
from termgrade.records.jsonl import iter_jsonl

DEFAULT_REPO_ID = repo_kind("trajectories").default_repo_id
ENVIRONMENTS_REPO_ID = repo_kind("environments").default_repo_id
_MIB = 1024**2


class _ByteProgress:
    """Called with each line's size; advances the bar once per MiB read."""

    def __init__(self, bar: Tracker) -> None:
        self.bar = bar
        self.total = 0

    def __call__(self, size: int) -> None:
        before = self.total // _MIB
        self.total += size
        for _ in range(self.total // _MIB - before):
            self.bar.advance()


@contextmanager
def _byte_progress(path: Path) -> Iterator[_ByteProgress]:
    with track("trials (MiB)", total=max(1, path.stat().st_size // _MIB)) as bar:
        yield _ByteProgress(bar)


def build_trajectories(
    out: Path,
    *,
    trials: RecordSource,
    task_roots: Sequence[Path] = (Path("environments"),),
    labels: RecordSource | None = None,
    splits: RecordSource | None = None,
    repo_id: str = DEFAULT_REPO_ID,
    environments_repo: str = ENVIRONMENTS_REPO_ID,
    overwrite: bool = False,
    row_group_bytes: int = ROW_GROUP_BYTES,
    file_bytes: int = FILE_BYTES,
    card_prose: Path | None = None,
    atif: bool = False,
    license: str | None = None,
) -> TrajectoriesSummary:
    """Stage the trajectories repo at ``out`` from a TrialRecord JSONL file (streamed) or
    from TrialRecord objects (or their dicts). ``labels`` (LabelRow) and ``splits``
    (SplitRow, from ``termgrade select``) put each trial's task x model x scaffold
    ``pass_rate`` / ``band`` and its task's ``split`` on every row, so users filter on them
    without a join; with ``splits``, a task with no flag is ``unseen``.
    ``environments_repo``: the repo id of the tasks and labels, which the card links.
    ``card_prose``: overrides of the card's prose sections. Every trial is also written
    as a Hub agent trace; ``atif``: and as a Harbor ATIF trajectory. ``license``: the
    license to state when the task dirs' task.toml files state none (:mod:`.licensing`)."""
    prose = load_card_prose(card_prose) if card_prose is not None else None
    trials_file = source_path(trials)
    if trials_file is not None and not trials_file.is_file():
        raise RecordError(str(trials), "no such file", fix="pass the TrialRecord JSONL file")
    # Task dirs give the exact instruction.md; without them, trials take it from their
    # transcripts (with a warning).
    inputs = load_inputs(task_roots, splits=splits, labels=labels, verify=None,
                         require_tasks=False)
    instructions = {tid: task.instruction for tid, task in inputs.tasks.items()}
    origins = [Origin.of(task.config.metadata) for task in inputs.tasks.values()]
    keys = JoinKeys(
        split={tid: (inputs.splits[tid].split if tid in inputs.splits else DEFAULT_SPLIT)
               for tid in inputs.tasks} if splits is not None else {},
        label={(r.task_id, r.model, r.scaffold): r for r in inputs.labels})
    stats = TrajectoryStats()
    summary = TrajectoriesSummary(out=Path(out), stats=stats, train_splits=sorted(
        {r.split for r in inputs.splits.values()
         if (r.role or LEGACY_ROLES.get(r.split)) == "train"}),
        origins=origins, license=known_license(origins, license))
    seen: set[str] = set()
    pending: dict[str, list[tuple[TrialRecord, str]]] = {}
    with staged_directory(Path(out), overwrite=overwrite) as stage:
        paths = RepoPaths(stage)
        writer = TrajectoryWriter(paths, row_group_bytes=row_group_bytes,
                                  row_group_rows=ROW_GROUP_ROWS, file_bytes=file_bytes)
        trace_rows = ParquetSplitWriter(paths.config_dir("traces"), TRACE_SPLIT,
                                        schema_for(TraceRow), row_group_rows=ROW_GROUP_ROWS)
        traces = TraceWriter(stage, atif=atif, rows=trace_rows)
        try:
            if trials_file is not None:
                with _byte_progress(trials_file) as counter:
                    for where, record in iter_jsonl(trials_file, TrialRecord,
                                                    on_line=counter):
                        _add(record, where, instructions, keys, seen, (writer, traces), stats,
                             pending)
            else:
                for where, record in records_of(trials, TrialRecord):
                    _add(record, where, instructions, keys, seen, (writer, traces), stats,
                         pending)
            for task_pending in pending.values():
                held, held_where = task_pending[0]
                raise _no_instruction(f"{held_where} (trial {held.trial_id})", held)
            if not stats.trials:
                raise BuildError(f"{trials_file or 'the trials given'}: no trial to build "
                                 "a trajectories repo from",
                                 fix="pass the trials.jsonl of a `termgrade grade` run (-o "
                                 "DIR/trials.jsonl) or of `termgrade ingest harbor`")
            results = writer.close()
            traced = trace_rows.close()
        except BaseException:
            writer.abort()
            trace_rows.abort()
            raise
        if trials_file is not None:  # records given as objects were never bytes here
            stats.input_bytes = counter.total
        for result in results.values():
            summary.files += [paths.rel(p) for p in result.paths]
        summary.files += [paths.rel(p) for p in traced.paths]
        summary.trace_files = traces.files
        summary.sft_bytes = results["sft"].payload_bytes
        summary.episode_bytes = results["episodes"].payload_bytes
        if stats.from_transcript:
            warnings.warn(DataWarning(
                f"{len(stats.from_transcript)} task(s) have no task dir "
                + (f"under {', '.join(map(str, task_roots))} " if task_roots else
                   "(no --tasks given) ")
                + f"(first: {min(stats.from_transcript)!r}); "
                "their rows take the instruction from the trial's first user message. Fix: "
                "pass their task dirs with --tasks for the exact instruction.md"),
                stacklevel=2)
        atomic_write_text(paths.readme, render_trajectories_card(
            paths, summary, repo_id=repo_id, environments_repo=environments_repo, prose=prose))
    return summary


def _transcript_instruction(record: TrialRecord) -> str | None:
    """The first user message: the instruction as the model saw it (for the bash-tool
    scaffold the instruction itself; for Terminus-2 its prompt around the instruction)."""
    for message in record.messages or []:
        if message.role == "user" and message.content:
            return message.content
    for step in record.episode or []:  # no messages: the episode's first user step
        if step.source == "user" and step.message:
            return step.message
    return None


@dataclass
class JoinKeys:
    """What each row is joined with: the task's split and the labels of its configuration."""

    split: dict[str, str]
    label: dict[tuple[str, str, str], LabelRow]

    def of(self, record: TrialRecord) -> dict[str, object]:
        label = self.label.get((record.task_id, record.model, record.scaffold))
        return {"split": self.split.get(record.task_id),
                "pass_rate": label.pass_rate if label is not None else None,
                "band": label.band if label is not None else None}


MAX_PENDING = 10_000
"""Trials of a task with no task dir, held until one of its trials' transcripts gives
the instruction (a retried infrastructure error often has no transcript)."""


def _add(record: TrialRecord, where: str, instructions: dict[str, str], keys: JoinKeys,
         seen: set[str], writers: tuple[TrajectoryWriter, TraceWriter], stats: TrajectoryStats,
         pending: dict[str, list[tuple[TrialRecord, str]]]) -> None:
    name = f"{where} (trial {record.trial_id})"
    if record.task_id not in instructions:
        prompt = _transcript_instruction(record)
        if prompt is None:
            waiting = pending.setdefault(record.task_id, [])
            if sum(map(len, pending.values())) >= MAX_PENDING:
                raise _no_instruction(name, record)
            waiting.append((record, where))
            return
        instructions[record.task_id] = prompt
        stats.from_transcript.add(record.task_id)
    if record.trial_id in seen:
        raise RecordError(name, f"duplicate trial_id {record.trial_id!r}",
                          fix="trial ids must be unique")
    seen.add(record.trial_id)
    trial = record.model_dump(mode="json")
    messages = chat_messages(trial)
    writers[0].add(trajectory_row(trial, messages, instructions[record.task_id],
                                  keys.of(record)), where=name)
    writers[1].add(trial, messages, instructions[record.task_id])
    stats.add(trial)
    for held, held_where in pending.pop(record.task_id, []):
        _add(held, held_where, instructions, keys, seen, writers, stats, pending)


def _no_instruction(name: str, record: TrialRecord) -> RecordError:
    return RecordError(name, f"trial of unknown task {record.task_id!r}, and no transcript "
                       "of that task holds a user message to take the instruction from",
                       fix="pass the task dirs with --tasks, or drop the trial")
