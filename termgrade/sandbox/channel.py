"""An append-only channel out of a container: what its processes write to PID 1's stdout.

PID 1 is the engine's init; its stdout is a pipe the engine forwards to the host. A line
written there is on its way out at once: no process inside the container can take it
back, edit it or delete it afterwards. The host keeps only the lines that start with the
expected prefix, bounded in size and number, and stops at an end marker.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

CHANNEL_PATH = "/proc/1/fd/1"
MAX_LINE_BYTES = 8192
MAX_LINES = 200_000


@dataclass
class ChannelLines:
    """What the channel carried, once closed."""

    lines: list[bytes] = field(default_factory=list)
    """Lines with the prefix, in arrival order, without the newline."""
    dropped: int = 0
    """Prefixed lines dropped for being over :data:`MAX_LINE_BYTES` or past :data:`MAX_LINES`."""
    ended: bool = False
    """The end marker arrived: every line written before it has been read."""


class LineChannel:
    """Reads ``chunks`` on a thread, keeping prefixed lines until ``end_marker``."""

    def __init__(self, chunks: Iterable[bytes], *, prefix: bytes, end_marker: bytes) -> None:
        self._chunks = chunks
        self._prefix = prefix
        self._end = end_marker
        self._result = ChannelLines()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True,
                                        name="termgrade-channel")
        self._thread.start()

    def _keep(self, line: bytes) -> None:
        if line == self._end:
            self._result.ended = True
            self._done.set()
            return
        if not line.startswith(self._prefix):
            return
        if len(self._result.lines) >= MAX_LINES:
            self._result.dropped += 1
        else:
            self._result.lines.append(line)

    def _read(self) -> None:
        pending = bytearray()
        overlong = False
        try:
            for chunk in self._chunks:
                if self._done.is_set():
                    break
                pending += chunk
                while True:
                    cut = pending.find(b"\n")
                    if cut < 0:
                        break
                    line = bytes(pending[:cut])
                    del pending[: cut + 1]
                    if overlong:  # the rest of a line already dropped
                        overlong = False
                        continue
                    self._keep(line.rstrip(b"\r"))
                    if self._done.is_set():
                        return
                if len(pending) > MAX_LINE_BYTES:
                    if pending.startswith(self._prefix):
                        self._result.dropped += 1
                    pending.clear()
                    overlong = True
        except Exception:  # the stream ends when the container goes away
            pass
        finally:
            self._done.set()

    def close(self, *, wait_s: float = 5.0) -> ChannelLines:
        """Wait up to ``wait_s`` for the end marker, then stop reading."""
        self._done.wait(wait_s)
        self._done.set()
        closer = getattr(self._chunks, "close", None)
        if callable(closer):
            with contextlib.suppress(Exception):
                closer()
        return self._result
