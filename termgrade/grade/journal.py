"""``DIR/trials.jsonl``: the output of a grading run and its journal at once.

Every finished trial, counted or lost to infrastructure, is appended and fsynced as one
line. A run that was killed resumes from it: finished trials are never redone, in-flight
ones are redone under the same trial id (they were never written), and a line torn by the
kill is dropped, so the file stays readable by ``termgrade labels``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pydantic import ValidationError

from termgrade.core.atomic import atomic_write_text
from termgrade.core.journal import append_record
from termgrade.records.trial import TrialRecord
from termgrade.records.version import validate_record

TRIALS_FILE = "trials.jsonl"


class TrialJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def load(self) -> list[TrialRecord]:
        """Every whole record; a torn or foreign line is dropped from the file."""
        if not self.path.exists():
            return []
        records: list[TrialRecord] = []
        kept: list[str] = []
        torn = 0
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                records.append(validate_record(TrialRecord, line))
                kept.append(line)
            except (json.JSONDecodeError, ValidationError):
                torn += 1
        if torn:
            atomic_write_text(self.path, "".join(f"{line}\n" for line in kept))
        return records

    def append(self, record: TrialRecord) -> None:
        append_record(self.path, self._lock, record)
