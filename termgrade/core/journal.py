"""Appending to a JSONL journal of finished records, so interrupted runs resume.

Each finished record is appended and fsynced as one whole line. Reading a journal (the
version check, lines kept but not read, a torn tail) is :mod:`termgrade.records.journal`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic import BaseModel


def append_record(path: Path, lock: threading.Lock, record: BaseModel) -> None:
    """Append ``record`` to ``path`` as one fsynced JSON line (threads share ``lock``).

    A file that does not end in a newline (a tail torn by a crash) gets one first, so the
    record starts a line of its own and the torn bytes never swallow it."""
    line = (record.model_dump_json() + "\n").encode()
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a+b") as handle:
            end = handle.seek(0, os.SEEK_END)
            if end:
                handle.seek(end - 1)
                if handle.read(1) != b"\n":
                    line = b"\n" + line
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
