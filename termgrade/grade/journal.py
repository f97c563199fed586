"""``DIR/trials.jsonl``: the output of a grading run and its journal at once.

Every finished trial, counted or lost to infrastructure, is appended and fsynced as one
line. A run that was killed resumes from it: finished trials are never redone, in-flight
ones are redone under the same trial id (they were never written). Reading goes through
:func:`termgrade.records.journal.read_journal`: a line this TermGrade cannot read (a newer
version, a bad field) is kept in the file and reported, never rewritten away; only a tail
torn by the kill (never a whole line) is moved aside to ``trials.jsonl.torn``.
"""

from __future__ import annotations

import threading
from pathlib import Path

from termgrade.core.journal import append_record
from termgrade.records.journal import UnreadableLine, read_journal
from termgrade.records.trial import TrialRecord

TRIALS_FILE = "trials.jsonl"


class TrialJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.unreadable: list[UnreadableLine] = []
        """After :meth:`load`: the lines kept in the file but not read."""
        self._lock = threading.Lock()

    def load(self) -> list[TrialRecord]:
        """Every readable record, in order; the lines it cannot read stay in the file."""
        read = read_journal(self.path, TrialRecord)
        self.unreadable = read.unreadable
        return read.records

    def append(self, record: TrialRecord) -> None:
        append_record(self.path, self._lock, record)
