"""An append-only JSONL journal of finished records, so interrupted runs resume."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from pydantic import ValidationError

from termgrade.verify.record import VerifyRecord


class Journal:
    """Each finished record is appended and fsynced; a torn last line is ignored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def load(self) -> dict[str, VerifyRecord]:
        """Finished records by task id (the last one wins)."""
        if not self.path.exists():
            return {}
        records: dict[str, VerifyRecord] = {}
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = VerifyRecord.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError):
                continue  # a line torn by a crash: that task is simply redone
            records[record.task_id] = record
        return records

    def append(self, record: VerifyRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())

    def reset(self) -> None:
        self.path.unlink(missing_ok=True)
