"""One pass over a trial file: its analysis frame, and where each record's line lies.

The file is read in blocks of whole lines (a release-sized ``trials.jsonl`` with
transcripts weighs gigabytes; memory holds one block). Each block goes through the same
readers ``termgrade labels`` uses: the strict pyarrow fast path
(:func:`termgrade.trialsets.fastpath.fast_read`, then
:func:`termgrade.trialsets.frame.frame_from_table`), or, when it cannot vouch for the
block, pydantic line by line (a line that is not a trial record raises the strict
reader's :class:`~termgrade.core.errors.RecordError` naming file, line and field; the
transcript fields are set aside there and validated when the trial's page reads it). The
byte offset and length of each line are kept, so a trial page reads that one line
(:func:`read_line`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import ValidationError

from termgrade.records import TrialRecord
from termgrade.records.jsonl import check_input, validate_line
from termgrade.trialsets.fastpath import fast_read, nonblank_lines
from termgrade.trialsets.frame import frame_from_records, frame_from_table

HEAVY_FIELDS = ("messages", "episode", "per_turn", "verifier_output", "test_evidence")
"""Fields of a trial that only its own page shows; the index never keeps them."""
MESSAGE_CHARS = 2000
"""How much of a failure message the index keeps (the trial page shows all of it)."""
BLOCK_BYTES = 64 * 2**20
"""Bytes read at once (a block always ends at a line's end)."""
EXTRA_COLUMNS = ("exception_type", "exception_message", "agent_timed_out")


def _blocks(path: Path, size: int) -> Iterator[tuple[int, int, bytes]]:
    """(byte offset, lines before it, block) of whole lines."""
    offset = lines = 0
    rest = b""
    with path.open("rb") as handle:
        while True:
            chunk = handle.read(size)
            data = rest + chunk
            if not chunk:
                if data:
                    yield offset, lines, data
                return
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = data
                continue
            block, rest = data[:cut + 1], data[cut + 1:]
            yield offset, lines, block
            offset += len(block)
            lines += block.count(b"\n")


def _light(path: Path, number: int, line: bytes) -> TrialRecord:
    try:
        doc: Any = json.loads(line)
        if not isinstance(doc, dict):
            raise ValueError("not an object")
        return TrialRecord.model_validate({k: v for k, v in doc.items()
                                           if k not in HEAVY_FIELDS})
    except (ValueError, ValidationError):
        # The strict reader names the file, line and field of what is wrong.
        return validate_line(path, number, line, TrialRecord)


def _extras_of_table(table: pa.Table) -> dict[str, Any]:
    return {name: table.column(name).to_pylist() for name in EXTRA_COLUMNS}


def _exact(path: Path, data: bytes, local: list[int], base: int,
           starts: np.ndarray) -> tuple[pd.DataFrame, dict[str, Any]]:
    records = []
    for number in local:
        begin, end = int(starts[number - 1]), int(starts[number]) - 1
        records.append(_light(path, base + number, data[begin:end]))
    frame = frame_from_records(records, str(path), [base + n for n in local])
    extras = {name: [getattr(r, name) for r in records] for name in EXTRA_COLUMNS}
    return frame, extras


def _block_frame(path: Path, offset: int, base: int, data: bytes) -> pd.DataFrame | None:
    local = nonblank_lines(data)
    if not local:
        return None
    # starts[i] = where line i + 1 begins (one past the block's end for the last)
    breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
    starts = np.concatenate(([0], breaks + 1, [len(data) + 1])).astype("int64")
    table = fast_read(data, TrialRecord, local)
    if table is not None:
        frame = frame_from_table(table, str(path), [base + n for n in local])
        extras = _extras_of_table(table)
    else:
        frame, extras = _exact(path, data, local, base, starts)
    index = np.asarray(local, dtype="int64") - 1
    frame["offset"] = offset + starts[index]
    frame["length"] = starts[index + 1] - 1 - starts[index]
    for name, values in extras.items():
        frame[name] = values
    frame["exception_message"] = [m[:MESSAGE_CHARS] if isinstance(m, str) else None
                                  for m in frame["exception_message"]]
    frame["agent_timed_out"] = frame["agent_timed_out"].fillna(False).astype(bool)
    return frame


def scan_file(path: Path, block_bytes: int = BLOCK_BYTES) -> pd.DataFrame | None:
    """The analysis frame of ``path`` plus ``offset``, ``length`` and
    :data:`EXTRA_COLUMNS`; None when it holds no record."""
    path = Path(path)
    check_input(path)
    parts = [part for offset, base, data in _blocks(path, block_bytes)
             if (part := _block_frame(path, offset, base, data)) is not None]
    if not parts:
        return None
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def read_line(path: Path, offset: int, length: int, number: int) -> TrialRecord:
    """The whole record on one line of ``path``, read by its byte offset and validated."""
    with Path(path).open("rb") as handle:
        handle.seek(offset)
        line = handle.read(length)
    return validate_line(path, number, line, TrialRecord)
