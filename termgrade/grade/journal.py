"""``DIR/trials.jsonl``: the output of a grading run and its journal at once.

Every finished trial, counted or lost to infrastructure, is appended and fsynced as one
line. A run that was killed resumes from it: finished trials are never redone, in-flight
ones are redone under the same trial id (they were never written). Reading goes through
:func:`termgrade.records.journal.read_journal`: a line this TermGrade cannot read (a newer
version, a bad field) is kept in the file and reported, never rewritten away; only a tail
torn by the kill (never a whole line) is moved aside to ``trials.jsonl.torn``.
``grade`` and ``regrade`` stop on such a line (:func:`refuse_unreadable`) before they
resume from the journal and again when they finish: ``labels``, ``report`` and ``view``
refuse the file, so a run that ended "next: termgrade labels" over it would mislead.
"""

from __future__ import annotations

import threading
from pathlib import Path

from termgrade.core.errors import RecordError
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


def refuse_unreadable(lines: list[UnreadableLine], path: Path, *,
                      finished: bool = False) -> None:
    """Raise :class:`RecordError` naming the first line of the journal ``path`` that could
    not be read (its file, line number and the field), how many there are, and the fix.
    ``finished``: the run's own trials were written (said), else nothing was run."""
    if not lines:
        return
    first = lines[0]
    more = f" ({len(lines) - 1} more line(s) like it)" if len(lines) > 1 else ""
    done = ("this run's trials are in it" if finished
            else "nothing was graded or written")
    raise RecordError(first.where, f"{first.problem}{more}; labels, report and view would "
                      f"refuse this journal ({done})",
                      fix=f"{first.fix.rstrip('.')}: repair or delete the line in {path} "
                      "(TermGrade keeps it there untouched), then rerun the same command: "
                      "it resumes")
