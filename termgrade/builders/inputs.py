"""Reading the builders' inputs: JSONL records (streamed line by line) and task dirs.

Records are read with the one strict JSONL reader, :func:`termgrade.records.jsonl.iter_jsonl`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from termgrade.core.errors import RecordError
from termgrade.records import LabelRow, SplitRow
from termgrade.records.jsonl import iter_jsonl
from termgrade.records.version import validate_record
from termgrade.task import Task, discover_tasks, load_task
from termgrade.verify.record import VerifyRecord

__all__ = ["Inputs", "RecordSource", "iter_jsonl", "load_inputs", "load_labels", "load_tasks",
           "records_of"]

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


RecordSource = Path | str | Iterable[Any] | Any
"""A JSONL file, or the objects themselves: records (or their dicts), a ``LabelSet``,
a band-central ``Selection``, a ``VerifyReport``."""


def _as_items(source: Any) -> Iterable[Any]:
    from termgrade.selection.bandcentral import Selection
    from termgrade.selection.io import split_rows

    if isinstance(source, Selection):
        return split_rows(source)
    rows = getattr(source, "rows", None)
    if callable(rows):  # LabelSet
        return cast(Iterable[Any], rows())
    records = getattr(source, "records", None)
    if isinstance(records, list):  # VerifyReport
        return records
    return cast(Iterable[Any], source)


def records_of(source: RecordSource, model: type[M]) -> Iterator[tuple[str, M]]:
    """(where, record) from a JSONL path or from objects, validated the same way."""
    if isinstance(source, str | Path):
        yield from iter_jsonl(Path(source), model)
        return
    for number, item in enumerate(_as_items(source), 1):
        where = f"<{model.__name__} #{number}>"
        if isinstance(item, model):
            yield where, item
            continue
        data = item.model_dump(mode="json") if isinstance(item, BaseModel) else item
        if not isinstance(data, dict):
            raise RecordError(where, f"{type(item).__name__} is not a {model.__name__}",
                              fix=f"pass {model.__name__} objects, dicts or a JSONL path")
        try:
            yield where, validate_record(model, data)
        except ValidationError as exc:
            raise RecordError(where, str(exc).splitlines()[0] + ": " +
                              "; ".join(e["msg"] for e in exc.errors()[:3]),
                              fix=f"give each record the fields of {model.__name__}") from exc


def _by_task(path: RecordSource, model: type[M], tasks: dict[str, Task],
             what: str) -> dict[str, M]:
    found: dict[str, M] = {}
    for where, record in records_of(path, model):
        task_id = str(getattr(record, "task_id"))  # noqa: B009 - every input model has it
        if task_id in found:
            raise RecordError(where, f"duplicate {what} for task {task_id!r}",
                              fix=f"keep one {what} per task")
        if task_id not in tasks:
            raise RecordError(where, f"{what} for unknown task {task_id!r}",
                              fix="add the task dir, or drop the record")
        found[task_id] = record
    return found


def load_labels(path: RecordSource, tasks: dict[str, Task],
                models: Sequence[str] | None = None) -> list[LabelRow]:
    """Label rows; unknown tasks, duplicates and tasks missing a model's label raise.
    ``models``: keep only these models' labels (the others need not cover every task)."""
    rows: list[LabelRow] = []
    seen: set[tuple[str, str, str]] = set()
    found: set[str] = set()
    for where, row in records_of(path, LabelRow):
        found.add(row.model)
        if models is not None and row.model not in models:
            continue
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
            raise RecordError(str(path) if isinstance(path, str | Path) else "<labels>",
                              f"no label for task {missing[0]!r} under model "
                              f"{model!r} / {scaffold!r} ({len(missing)} task(s) missing)",
                              fix="grade the missing tasks, or choose the models that cover "
                              "every task (--model, repeatable)")
    unknown = sorted(set(models or ()) - found)
    if unknown:
        raise RecordError(str(path) if isinstance(path, str | Path) else "<labels>",
                          f"no labels for model(s) {', '.join(map(repr, unknown))}",
                          fix="pick among: " + ", ".join(sorted(found)))
    return sorted(rows, key=lambda r: (r.task_id, r.model, r.scaffold))


def load_inputs(roots: Iterable[Path], *, splits: RecordSource | None,
                labels: RecordSource | None, verify: RecordSource | None,
                models: Sequence[str] | None = None, require_tasks: bool = True) -> Inputs:
    tasks = load_tasks(roots)
    if not tasks and require_tasks:
        raise RecordError(", ".join(str(r) for r in roots), "no task directories found",
                          fix="pass folders that hold task dirs (with task.toml)")
    from termgrade.selection.bandcentral import check_split_name

    split_rows = _by_task(splits, SplitRow, tasks, "split flag") if splits is not None else {}
    for name in sorted({row.split for row in split_rows.values()}):
        check_split_name(name, str(splits) if isinstance(splits, str | Path) else "splits")
    return Inputs(
        tasks=tasks,
        splits=split_rows,
        labels=load_labels(labels, tasks, models) if labels is not None else [],
        verify=(_by_task(verify, VerifyRecord, tasks, "verify record")
                if verify is not None else {}),
    )
