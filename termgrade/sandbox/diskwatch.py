"""A disk limit for containers whose engine cannot enforce one.

Docker's ``--storage-opt size=`` needs overlay2 on xfs with project quotas; on other
hosts a watchdog measures the container's writable layer on the host (``du``, which
walks any depth by file descriptors) and kills the container once it passes the limit.
"""

from __future__ import annotations

import subprocess
import threading
import time

from termgrade.sandbox.base import Sandbox

MIN_INTERVAL_S = 1.0


def layer_bytes(upper_dir: str, *more: str) -> int:
    """Bytes the writable layer (and ``more`` paths) take on disk (allocated blocks, hard
    links once)."""
    done = subprocess.run(["du", "-s", "-c", "-x", "-B1", upper_dir, *more],
                          capture_output=True, text=True, check=False)
    try:
        return int(done.stdout.splitlines()[-1].split()[0])  # the "total" line
    except (IndexError, ValueError):
        return 0


class DiskWatch:
    """Kills ``sandbox`` when ``upper_dir`` and what else it writes on the host
    (:meth:`Sandbox.host_writable`) grow past ``limit_bytes``, until stopped."""

    def __init__(self, sandbox: Sandbox, upper_dir: str, limit_bytes: int) -> None:
        self.sandbox = sandbox
        self.upper_dir = upper_dir
        self.paths = (upper_dir, *sandbox.host_writable())
        self.limit_bytes = limit_bytes
        self.exceeded: int | None = None
        """Bytes measured when the limit was passed; None while within it."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="termgrade-disk")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            used = layer_bytes(*self.paths)
            if used > self.limit_bytes and not self._stop.is_set():
                self.exceeded = used
                self.sandbox.halt(kill=True)
                return
            # Measuring a large layer costs time: poll less often, never more than 10%.
            self._stop.wait(max(MIN_INTERVAL_S, 10 * (time.monotonic() - started)))

    def stop(self) -> int | None:
        """Stop watching; returns the bytes measured if the limit was passed."""
        self._stop.set()
        return self.exceeded

    def check_now(self) -> int | None:
        """One last measurement after the phase ended (a burst between polls)."""
        if self.exceeded is None:
            used = layer_bytes(*self.paths)
            if used > self.limit_bytes:
                self.exceeded = used
        return self.exceeded
