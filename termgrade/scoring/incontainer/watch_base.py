"""The broker's watches' common part: inotify opened through ``ctypes``, its events read,
and an alarm said once per path (``termgrade_watch``, ``watch_path`` and ``watch_names``
each stage it inline). Kept free of TermGrade imports and of syntax newer than Python 3.8.
"""

import os
import struct
from collections.abc import Iterator
from typing import Any

MAX_FIELD = 1000
IN_ISDIR = 0x40000000
IN_Q_OVERFLOW = 0x4000
IN_NEW_NAME = 0x100 | 0x80
"""inotify: create, moved to (a name appears in a watched directory)."""
IN_REWRITE = 0x2 | 0x4 | 0x8
"""inotify: modify, attrib, close-write (an entry's bytes or metadata written)."""


def inotify_events(fd: int) -> "Iterator[tuple[int, int, str]]":
    """Every event inotify has queued on ``fd`` (non-blocking), as (watch, mask, name)."""
    for wd, mask, _cookie, name in inotify_records(fd):
        yield wd, mask, name


def inotify_records(fd: int) -> "Iterator[tuple[int, int, int, str]]":
    """Every event inotify has queued on ``fd`` (non-blocking), as (watch, mask, cookie,
    name): a rename's two halves share a cookie."""
    while fd >= 0:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        offset = 0
        while offset + 16 <= len(data):
            wd, mask, cookie, size = struct.unpack_from("iIII", data, offset)
            name = data[offset + 16:offset + 16 + size].rstrip(b"\0").decode("utf-8",
                                                                              "replace")
            offset += 16 + size
            yield wd, mask, cookie, name


class InotifyWatch:
    """An inotify instance (``fd`` -1 where it cannot be had: nothing is reported then)
    and the alarms it raised, each path once."""

    def __init__(self, signer: Any) -> None:
        self.signer = signer
        self.reported: set[str] = set()
        self.watches: dict[int, str] = {}
        self.fd = -1
        self.libc: Any = None
        try:
            import ctypes

            self.libc = ctypes.CDLL(None, use_errno=True)
            self.fd = int(self.libc.inotify_init1(0o4000 | 0o2000000))  # NONBLOCK, CLOEXEC
        except Exception:
            self.fd = -1

    def add_watch(self, path: str, mask: int) -> int:
        """Watch ``path`` for ``mask`` (its watch descriptor, or -1)."""
        if self.fd < 0:
            return -1
        return int(self.libc.inotify_add_watch(self.fd, os.fsencode(path), mask))

    def _alarm(self, path: str, why: str) -> None:
        if path not in self.reported:
            self.reported.add(path)
            self.signer.emit({"e": "alarm", "how": "verifier-changed",
                              "path": f"{path}: {why}"[:MAX_FIELD], "pid": 0})
