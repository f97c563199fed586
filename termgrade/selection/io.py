"""Split flags on disk: one :class:`SplitRow` per pool task (JSONL), read back strictly."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from termgrade.core.atomic import atomic_write_jsonl
from termgrade.core.errors import RecordError
from termgrade.records import SplitRow
from termgrade.records.jsonl import parse_lines, read_input_bytes
from termgrade.selection.bandcentral import Selection

SPLIT_FIX = ("make each line one JSON object matching schemas/split.schema.json "
             "(regenerate it with `termgrade select`)")


def split_rows(selection: Selection) -> list[SplitRow]:
    pool = selection.pool.sort_values("task_id")
    return [SplitRow(task_id=str(r.task_id), split=str(r.split),
                     role=r.role if r.role in ("train", "validation") else None,
                     pass_rate=None if pd.isna(r.pass_rate) else float(r.pass_rate),
                     source=str(r.source))
            for r in pool.itertuples()]


def write_splits(path: Path, selection: Selection) -> int:
    rows = split_rows(selection)
    atomic_write_jsonl(path, (row.model_dump(mode="json") for row in rows))
    return len(rows)


def read_splits(paths: Sequence[Path]) -> pd.DataFrame:
    """Split rows as a frame (task_id, split, pass_rate, source)."""
    rows = []
    for path in paths:
        rows += [r.model_dump() for _, r in parse_lines(Path(path), read_input_bytes(Path(path)),
                                                       SplitRow, SPLIT_FIX)]
    frame = pd.DataFrame(rows, columns=["task_id", "split", "pass_rate", "source"])
    dup = frame["task_id"].duplicated()
    if dup.any():
        raise RecordError(", ".join(str(p) for p in paths),
                          f"task {frame.loc[dup, 'task_id'].iloc[0]!r} has two split rows",
                          fix="pass each splits file once")
    return frame
