"""When the engine is best left alone: this process's trials say when their scoring
container B has started (the last engine call on a trial's critical path), and the warm
pool (:mod:`termgrade.scoring.pair.warm`) makes its next pair after such a moment, while that
trial's test.sh runs. A pair made while a trial starts its B slows that start: both are
engine work (dockerd, containerd, runc) on the same cores; measured here, B's start takes
0.15 s alone and 0.22 s beside a pair being made.
"""

from __future__ import annotations

import threading

_MOMENTS = threading.Condition()
_count = 0


def now() -> int:
    """The moments so far (pass it to :func:`wait_after`)."""
    with _MOMENTS:
        return _count


def arrive() -> None:
    """A trial's B started: the engine work may go ahead."""
    global _count
    with _MOMENTS:
        _count += 1
        _MOMENTS.notify_all()


def wait_after(seen: int, timeout_s: float, wanted: threading.Event | None = None) -> bool:
    """Until a moment after ``seen`` (:func:`now`) or ``wanted`` is set (then
    :func:`wake`), at most ``timeout_s``; False on the timeout."""
    with _MOMENTS:
        return _MOMENTS.wait_for(
            lambda: _count > seen or (wanted is not None and wanted.is_set()), timeout_s)


def wake() -> None:
    """Have the waiters look at their ``wanted`` events again."""
    with _MOMENTS:
        _MOMENTS.notify_all()
