"""Read and write trial JSONL (one :class:`TrialRecord` per line).

Reading is strict: a malformed line raises :class:`RecordError` naming ``file:line`` and the
field (the one JSONL reader, :mod:`termgrade.records.jsonl`). Suspicious but usable data (NaN
rewards, counted trials without a reward, duplicate attempts) becomes a :class:`DataIssue`
with a count, never a silent zero.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from termgrade.core.atomic import atomic_writer
from termgrade.core.errors import RecordError
from termgrade.core.progress import track
from termgrade.records import TrialRecord
from termgrade.records.jsonl import (
    describe_validation_error,
    parse_lines,
    read_input_bytes,
    record_fix,
)
from termgrade.trialsets.checks import check_trials
from termgrade.trialsets.fastpath import fast_read, nonblank_lines
from termgrade.trialsets.frame import empty_frame, frame_from_records, frame_from_table
from termgrade.trialsets.issues import DataIssue, IssueLog

__all__ = ["TRIAL_FIX", "TrialSet", "describe_validation_error", "iter_trial_records",
           "read_trial_frame", "read_trials", "write_trials"]

TRIAL_FIX = record_fix(TrialRecord)


@dataclass
class TrialSet:
    """Trials from one or more files, as an analysis frame (:mod:`termgrade.trialsets.frame`)."""

    frame: pd.DataFrame
    files: list[Path] = field(default_factory=list)
    issues: list[DataIssue] = field(default_factory=list)


def read_trial_frame(path: Path) -> pd.DataFrame:
    """One file's trials as a frame; the pyarrow fast path when it can vouch for the file."""
    data = read_input_bytes(path)
    lines = nonblank_lines(data)
    if not lines:
        return empty_frame()
    table = fast_read(data, TrialRecord, lines)
    if table is not None:
        return frame_from_table(table, str(path), lines)
    parsed = list(parse_lines(path, data, TrialRecord))
    return frame_from_records([r for _, r in parsed], str(path), [n for n, _ in parsed])


def read_trials(paths: Sequence[Path]) -> TrialSet:
    """Read, validate and check trial files. Raises RecordError; warns with DataWarning."""
    if not paths:
        raise RecordError("(no input)", "no trial files given", fix="pass one or more .jsonl files")
    frames = []
    with track("reading trials", total=len(paths), enabled=None if len(paths) > 1 else False) \
            as bar:
        for path in paths:
            frames.append(read_trial_frame(Path(path)))
            bar.advance()
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    log = IssueLog()
    for path, part in zip(paths, frames, strict=True):
        if part.empty:
            log.add("empty_file", 1, f"{path} holds no trial records; it was skipped")
    frame = check_trials(frame, log)
    return TrialSet(frame=frame, files=[Path(p) for p in paths], issues=log.issues)


def iter_trial_records(path: Path) -> Iterator[TrialRecord]:
    """Every record of one file, validated (slow, exact; for tools that need whole records)."""
    for _, record in parse_lines(path, read_input_bytes(path), TrialRecord):
        yield record


def _dump(record: TrialRecord | dict[str, Any]) -> str:
    if isinstance(record, BaseModel):
        return record.model_dump_json(exclude_none=False)
    return json.dumps(record, sort_keys=True)


def write_trials(path: Path, records: Iterable[TrialRecord | dict[str, Any]]) -> int:
    """Write records as JSONL, atomically, one at a time (``records`` may be a generator of
    any length). Returns how many were written."""
    n = 0
    with atomic_writer(path) as handle:
        for record in records:
            handle.write((_dump(record) + "\n").encode("utf-8"))
            n += 1
    return n
