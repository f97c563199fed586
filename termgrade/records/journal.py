"""Reading the append-only JSONL journals (grade, verify, generate): no line is ever lost.

Every line goes through the one version check (:func:`~termgrade.records.version.validate_record`,
as every reader of record files does): an older version is
migrated, a newer one or a line with a bad field is *kept* in the file, untouched, and
reported (:class:`UnreadableLine`: where, what is wrong, the fix). Nothing is rewritten.

The one exception is a torn tail: bytes after the last newline that are not a whole JSON
record (a crash mid-append; records are only ever written whole, newline included). Those
bytes were never a line: they are cut from the journal so the next append starts a line
of its own, and kept in ``<journal>.torn`` (appended, so several crashes keep all).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from termgrade.core.journal import append_record
from termgrade.records.jsonl import describe_validation_error, line_error
from termgrade.records.version import validate_record

M = TypeVar("M", bound=BaseModel)

TORN_SUFFIX = ".torn"


@dataclass(frozen=True)
class UnreadableLine:
    """A journal line this TermGrade cannot read: kept in the file, reported."""

    where: str
    """``file:line`` (and the record's id when the line names one)."""
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.where}: {self.problem} (kept in the file; fix: {self.fix})"


@dataclass
class JournalRead(Generic[M]):
    """What a journal holds: its readable records in order, and the lines it kept unread."""

    records: list[M] = field(default_factory=list)
    unreadable: list[UnreadableLine] = field(default_factory=list)
    torn: Path | None = None
    """Where a torn tail's bytes were moved (``<journal>.torn``), when there was one."""


def _cut_torn_tail(path: Path, data: bytes) -> tuple[bytes, Path | None]:
    """``data`` without bytes after its last newline that are not a whole JSON value
    (moved to ``path.torn``); a whole record missing only its newline gets one."""
    if not data or data.endswith(b"\n"):
        return data, None
    head, _, tail = data.rpartition(b"\n")
    head = head + b"\n" if head else b""
    try:
        json.loads(tail)
    except ValueError:
        torn = path.with_name(path.name + TORN_SUFFIX)
        with torn.open("ab") as handle:
            handle.write(tail + b"\n")
        with path.open("r+b") as handle:
            handle.truncate(len(head))
            handle.flush()
            os.fsync(handle.fileno())
        return head, torn
    with path.open("ab") as handle:  # a whole line missing its newline: end it
        handle.write(b"\n")
    return data + b"\n", None


def read_journal(path: Path, model: type[M], *, resume: bool = True) -> JournalRead[M]:
    """Every line of ``path`` as a ``model`` through the one version check; the lines it
    cannot read stay where they are and come back in ``unreadable``. ``resume=False``
    (a reader that will not append, e.g. ``termgrade runs``) leaves a torn tail in place
    and reports it as unreadable."""
    if not path.exists():
        return JournalRead()
    data, torn = path.read_bytes(), None
    if resume:
        data, torn = _cut_torn_tail(path, data)
    read: JournalRead[M] = JournalRead(torn=torn)
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            read.records.append(validate_record(model, line))
        except ValidationError as exc:
            error = line_error(path, number, line, model, exc)
            read.unreadable.append(UnreadableLine(error.source,
                                                  describe_validation_error(exc, model),
                                                  error.fix or ""))
    return read


class JsonlJournal(Generic[M]):
    """Finished ``record_type`` records, keyed by their ``key`` field (the last one wins).

    After :meth:`load`, ``unreadable`` lists the lines kept but not read."""

    def __init__(self, path: Path, record_type: type[M], key: str) -> None:
        self.path = path
        self.record_type = record_type
        self.key = key
        self.unreadable: list[UnreadableLine] = []
        self._lock = threading.Lock()

    def load(self) -> dict[str, M]:
        read = read_journal(self.path, self.record_type)
        self.unreadable = read.unreadable
        return {str(getattr(record, self.key)): record for record in read.records}

    def append(self, record: M) -> None:
        append_record(self.path, self._lock, record)

    def reset(self) -> None:
        self.path.unlink(missing_ok=True)

