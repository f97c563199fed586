"""The verify journal: finished :class:`VerifyRecord` lines, keyed by task id."""

from __future__ import annotations

from pathlib import Path

from termgrade.records.journal import JsonlJournal
from termgrade.verify.record import VerifyRecord


class Journal(JsonlJournal[VerifyRecord]):
    """Each finished record is appended and fsynced; a torn last line is ignored."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, VerifyRecord, key="task_id")
