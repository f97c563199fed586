"""Reading the builders' inputs: JSONL records (streamed line by line) and task dirs.

Records are read with the one strict JSONL reader, :func:`termgrade.records.jsonl.iter_jsonl`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

from pydantic import BaseModel, ValidationError

from termgrade.core.errors import RecordError
from termgrade.records import LabelRow, SplitRow
from termgrade.records.jsonl import iter_jsonl
from termgrade.records.version import validate_record
from termgrade.task import Task, discover_tasks, load_task
from termgrade.verify.record import VerifyRecord

if TYPE_CHECKING:
    from termgrade.labels.compute import LabelSet
    from termgrade.selection.bandcentral import Selection
    from termgrade.verify.pipeline import VerifyReport

__all__ = ["Inputs", "RecordSource", "load_inputs", "load_labels", "load_tasks",
           "records_of", "source_name", "source_path"]

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


RecordSource: TypeAlias = (
    "Path | str | LabelSet | Selection | VerifyReport | Iterable[BaseModel | dict[str, Any]]")
"""Where a builder's records come from: a JSONL file, or the objects themselves: a
:class:`~termgrade.labels.compute.LabelSet`, a band-central
:class:`~termgrade.selection.bandcentral.Selection`, a
:class:`~termgrade.verify.pipeline.VerifyReport`, or the records (or their dicts)."""


def source_path(source: RecordSource | None) -> Path | None:
    """The JSONL file ``source`` names, or None when it holds the records themselves."""
    return Path(source) if isinstance(source, str | Path) else None


def source_name(source: RecordSource | None, default: str) -> str:
    """How messages name ``source``: its path, or ``default`` for objects in memory."""
    path = source_path(source)
    return default if path is None else str(path)


def _as_items(source: RecordSource) -> Iterable[BaseModel | dict[str, Any]]:
    """The records of an in-memory ``source``, each kind of stage result by its own type."""
    from termgrade.labels.compute import LabelSet
    from termgrade.selection.bandcentral import Selection
    from termgrade.selection.io import split_rows
    from termgrade.verify.pipeline import VerifyReport

    if isinstance(source, Selection):
        return split_rows(source)
    if isinstance(source, LabelSet):
        return source.rows()
    if isinstance(source, VerifyReport):
        return source.records
    return cast(Iterable[BaseModel | dict[str, Any]], source)


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


PerTask = TypeVar("PerTask", SplitRow, VerifyRecord)
"""A record kind with one record per task, keyed by its ``task_id``."""


def _by_task(path: RecordSource, model: type[PerTask], tasks: dict[str, Task],
             what: str) -> dict[str, PerTask]:
    found: dict[str, PerTask] = {}
    for where, record in records_of(path, model):
        task_id = record.task_id
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
            raise RecordError(source_name(path, "<labels>"),
                              f"no label for task {missing[0]!r} under model "
                              f"{model!r} / {scaffold!r} ({len(missing)} task(s) missing)",
                              fix="grade the missing tasks, or choose the models that cover "
                              "every task (--model, repeatable)")
    unknown = sorted(set(models or ()) - found)
    if unknown:
        raise RecordError(source_name(path, "<labels>"),
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
        check_split_name(name, source_name(splits, "splits"))
    return Inputs(
        tasks=tasks,
        splits=split_rows,
        labels=load_labels(labels, tasks, models) if labels is not None else [],
        verify=(_by_task(verify, VerifyRecord, tasks, "verify record")
                if verify is not None else {}),
    )
