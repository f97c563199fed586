"""``termgrade build trajectories``: every graded attempt, as SFT messages and full episodes.

Input: ``--trials`` (TrialRecord JSONL), read one line at a time, and the task dirs (for
the instruction and to refuse trials of unknown tasks). Memory is bounded by one row
group per config, however many trials go in. Output::

    README.md                                 card (templates/trajectories.md)
    data/sft/train-NNNNN-of-MMMMM.parquet      config "sft" (default)
    data/episodes/train-NNNNN-of-MMMMM.parquet config "episodes"
    figures/pass_rate_by_model.png
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from termgrade.atomic import atomic_write_text
from termgrade.builders.common import staged_directory
from termgrade.builders.inputs import RecordSource, iter_jsonl, load_tasks, records_of
from termgrade.builders.layout import RepoPaths
from termgrade.builders.parquet_writer import FILE_BYTES, ROW_GROUP_BYTES, ROW_GROUP_ROWS
from termgrade.builders.trajectories_card import render_trajectories_card
from termgrade.builders.trajectory_rows import chat_messages, episode_row
from termgrade.builders.trajectory_stats import TrajectoryStats
from termgrade.builders.trajectory_writer import TrajectoryWriter
from termgrade.errors import RecordError
from termgrade.progress import Tracker, track
from termgrade.records import TrialRecord

DEFAULT_REPO_ID = "ai-and/termgrade-trajectories"
_MIB = 1024**2


@dataclass
class TrajectoriesSummary:
    out: Path
    stats: TrajectoryStats
    files: list[str] = field(default_factory=list)
    sft_bytes: int = 0
    episode_bytes: int = 0


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
    trials: RecordSource,
    out: Path,
    *,
    task_roots: Sequence[Path] = (Path("environments"),),
    repo_id: str = DEFAULT_REPO_ID,
    overwrite: bool = False,
    row_group_bytes: int = ROW_GROUP_BYTES,
    file_bytes: int = FILE_BYTES,
) -> TrajectoriesSummary:
    """Stage the trajectories repo at ``out`` from a TrialRecord JSONL file (streamed) or
    from TrialRecord objects (or their dicts)."""
    if isinstance(trials, str | Path) and not Path(trials).is_file():
        raise RecordError(str(trials), "no such file", fix="pass the TrialRecord JSONL file")
    instructions = {tid: task.instruction for tid, task in load_tasks(task_roots).items()}
    stats = TrajectoryStats()
    summary = TrajectoriesSummary(out=Path(out), stats=stats)
    seen: set[str] = set()
    with staged_directory(Path(out), overwrite=overwrite) as stage:
        paths = RepoPaths(stage)
        writer = TrajectoryWriter(paths, row_group_bytes=row_group_bytes,
                                  row_group_rows=ROW_GROUP_ROWS, file_bytes=file_bytes)
        try:
            if isinstance(trials, str | Path):
                with _byte_progress(Path(trials)) as counter:
                    for where, record in iter_jsonl(Path(trials), TrialRecord,
                                                    on_line=counter):
                        _add(record, where, instructions, seen, writer, stats)
            else:
                for where, record in records_of(trials, TrialRecord):
                    _add(record, where, instructions, seen, writer, stats)
            results = writer.close()
        except BaseException:
            writer.abort()
            raise
        stats.input_bytes = counter.total
        for result in results.values():
            summary.files += [paths.rel(p) for p in result.paths]
        summary.sft_bytes = results["sft"].payload_bytes
        summary.episode_bytes = results["episodes"].payload_bytes
        atomic_write_text(paths.readme, render_trajectories_card(paths, summary, repo_id=repo_id))
    return summary


def _add(record: TrialRecord, where: str, instructions: dict[str, str], seen: set[str],
         writer: TrajectoryWriter, stats: TrajectoryStats) -> None:
    name = f"{where} (trial {record.trial_id})"
    if record.task_id not in instructions:
        raise RecordError(name, f"trial of unknown task {record.task_id!r}",
                          fix="pass the task dirs with --tasks, or drop the trial")
    if record.trial_id in seen:
        raise RecordError(name, f"duplicate trial_id {record.trial_id!r}",
                          fix="trial ids must be unique")
    seen.add(record.trial_id)
    trial = record.model_dump(mode="json")
    writer.add(episode_row(trial, chat_messages(trial), instructions[record.task_id]),
               where=name)
    stats.add(trial)
