"""An append-only JSONL journal of finished records, so interrupted runs resume.

Each finished record is appended and fsynced as one line; on load a torn last line (a
crash mid-write) is ignored and its item is simply redone. Records are pydantic models;
the journal keys them by one of their string fields, and the last record of a key wins.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

RecordT = TypeVar("RecordT", bound=BaseModel)


def append_record(path: Path, lock: threading.Lock, record: BaseModel) -> None:
    """Append ``record`` to ``path`` as one fsynced JSON line (threads share ``lock``)."""
    line = record.model_dump_json() + "\n"
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


class JsonlJournal(Generic[RecordT]):
    """Finished ``record_type`` records, keyed by their ``key`` field."""

    def __init__(self, path: Path, record_type: type[RecordT], key: str) -> None:
        self.path = path
        self.record_type = record_type
        self.key = key
        self._lock = threading.Lock()

    def load(self) -> dict[str, RecordT]:
        """Finished records by key (the last one wins)."""
        if not self.path.exists():
            return {}
        records: dict[str, RecordT] = {}
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = self.record_type.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError):
                continue  # a line torn by a crash: that item is simply redone
            records[str(getattr(record, self.key))] = record
        return records

    def append(self, record: RecordT) -> None:
        append_record(self.path, self._lock, record)

    def reset(self) -> None:
        self.path.unlink(missing_ok=True)
