"""Reading the builders' inputs: JSONL records (streamed line by line) and task dirs.

Records are read with the one strict JSONL reader, :func:`termgrade.records.jsonl.iter_jsonl`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from termgrade.errors import RecordError
from termgrade.records import LabelRow, SplitRow
from termgrade.records.jsonl import iter_jsonl
from termgrade.task import Task, discover_tasks, load_task
from termgrade.verify.record import VerifyRecord

__all__ = ["Inputs", "iter_jsonl", "load_inputs", "load_labels", "load_tasks"]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Inputs:
    """Task dirs and the optional per-task records, checked against each other."""

    tasks: dict[str, Task]
    splits: dict[str, SplitRow]
    labels: list[LabelRow]
    verify: dict[str, VerifyRecord]


def load_tasks(roots: Iterable[Path]) -> dict[str, Task]:
    """Tasks by id; duplicates across roots raise (``discover_tasks``)."""
    return {path.name: load_task(path) for path in discover_tasks(*roots)}


def _by_task(path: Path, model: type[M], tasks: dict[str, Task], what: str) -> dict[str, M]:
    found: dict[str, M] = {}
    for where, record in iter_jsonl(path, model):
        task_id = str(getattr(record, "task_id"))  # noqa: B009 - every input model has it
        if task_id in found:
            raise RecordError(where, f"duplicate {what} for task {task_id!r}",
                              fix=f"keep one {what} per task")
        if task_id not in tasks:
            raise RecordError(where, f"{what} for unknown task {task_id!r}",
                              fix="add the task dir, or drop the record")
        found[task_id] = record
    return found


def load_labels(path: Path, tasks: dict[str, Task]) -> list[LabelRow]:
    """Label rows; unknown tasks, duplicates and tasks missing a model's label raise."""
    rows: list[LabelRow] = []
    seen: set[tuple[str, str, str]] = set()
    for where, row in iter_jsonl(path, LabelRow):
        key = (row.task_id, row.model, row.scaffold)
        if row.task_id not in tasks:
            raise RecordError(where, f"label for unknown task {row.task_id!r}",
                              fix="add the task dir, or drop the label")
        if key in seen:
            raise RecordError(where, f"duplicate label for {key}", fix="keep one row per key")
        seen.add(key)
        rows.append(row)
    configs = sorted({(r.model, r.scaffold) for r in rows})
    for model, scaffold in configs:
        missing = sorted(t for t in tasks if (t, model, scaffold) not in seen)
        if missing:
            raise RecordError(str(path), f"no label for task {missing[0]!r} under model "
                              f"{model!r} / {scaffold!r} ({len(missing)} task(s) missing)",
                              fix="grade the missing tasks, or drop them from the build")
    return sorted(rows, key=lambda r: (r.task_id, r.model, r.scaffold))


def load_inputs(roots: Iterable[Path], *, splits: Path | None, labels: Path | None,
                verify: Path | None) -> Inputs:
    tasks = load_tasks(roots)
    if not tasks:
        raise RecordError(", ".join(str(r) for r in roots), "no task directories found",
                          fix="pass folders that hold task dirs (with task.toml)")
    return Inputs(
        tasks=tasks,
        splits=_by_task(splits, SplitRow, tasks, "split flag") if splits else {},
        labels=load_labels(labels, tasks) if labels else [],
        verify=_by_task(verify, VerifyRecord, tasks, "verify record") if verify else {},
    )
