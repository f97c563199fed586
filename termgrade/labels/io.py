"""Read and write labels JSONL (one :class:`LabelRow` per line), strictly."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from termgrade.core.atomic import atomic_write_jsonl
from termgrade.core.errors import RecordError
from termgrade.labels.compute import KEYS, LABEL_COLUMNS, LabelSet
from termgrade.records import LabelRow
from termgrade.records.jsonl import check_input, parse_lines, read_input_bytes, record_fix
from termgrade.trialsets.fastpath import fast_read, nonblank_lines

LABEL_FIX = record_fix(LabelRow)


def write_labels(path: Path, labels: LabelSet) -> int:
    rows = [row.model_dump(mode="json") for row in labels.rows()]
    atomic_write_jsonl(path, rows)
    return len(rows)


def _read_one(path: Path) -> pd.DataFrame:
    data = read_input_bytes(path)
    lines = nonblank_lines(data)
    if not lines:
        raise RecordError(str(path), "holds no label rows", fix="pass a labels.jsonl file")
    table = fast_read(data, LabelRow, lines)
    if table is not None:
        frame = table.select(LABEL_COLUMNS).to_pandas()
    else:
        parsed = list(parse_lines(path, data, LabelRow))
        lines = [n for n, _ in parsed]
        frame = pd.DataFrame([r.model_dump() for _, r in parsed], columns=LABEL_COLUMNS)
    frame["pass_rate"] = frame["pass_rate"].astype("float64")
    frame["file"] = str(path)
    frame["line"] = np.asarray(lines, dtype="int64")
    return frame


def _check(frame: pd.DataFrame) -> None:
    problems = (
        (frame["n_passed"] > frame["n_counted"], "n_passed", "n_passed > n_counted"),
        (frame["pass_rate"].isna() != (frame["n_counted"] == 0), "pass_rate",
         "pass_rate must be null exactly when n_counted is 0"),
        ((frame["n_counted"] > 0) & ((frame["pass_rate"] - frame["n_passed"]
                                      / frame["n_counted"].clip(lower=1)).abs() > 1e-9),
         "pass_rate", "pass_rate differs from n_passed / n_counted"),
        (frame.duplicated(KEYS, keep="first"), "task_id",
         "a second row for the same task x model x scaffold"),
    )
    for mask, name, what in problems:
        if mask.any():
            row = frame[mask].iloc[0]
            raise RecordError(f"{row['file']}:{row['line']}",
                              f"field '{name}': {what} ({int(mask.sum())} row(s) like this)",
                              fix="pass each labels file once; regenerate it with "
                                  "`termgrade labels`")


def read_labels(paths: Sequence[Path]) -> pd.DataFrame:
    """Label rows from one or more files as a frame with :data:`LABEL_COLUMNS`."""
    if not paths:
        raise RecordError("(no input)", "no label files given", fix="pass labels.jsonl")
    frames = [_read_one(Path(p)) for p in paths]
    frame = pd.concat(frames, ignore_index=True)
    _check(frame)
    return frame[LABEL_COLUMNS].sort_values(KEYS, ignore_index=True)


def _first_line(path: Path) -> tuple[int, bytes]:
    check_input(path)
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                return number, line
    raise RecordError(str(path), "is empty", fix="pass labels or trials JSONL")


def sniff_kind(path: Path) -> str:
    """``"labels"`` or ``"trials"``, from the keys of the first non-blank line."""
    number, line = _first_line(Path(path))
    try:
        first = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}:{number}", f"not valid JSON: {exc}",
                          fix="pass labels or trials JSONL") from None
    keys = set(first) if isinstance(first, dict) else set()
    if {"trial_id", "reward"} <= keys:
        return "trials"
    if {"pass_rate", "n_counted"} <= keys:
        return "labels"
    raise RecordError(f"{path}:{number}", "neither a trial record nor a label row",
                      fix="pass files written by `termgrade ingest` / `termgrade labels`")
