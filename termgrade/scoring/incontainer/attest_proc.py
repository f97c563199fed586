"""The plugin's reading of ``/proc``: the container's processes, their parents, start times,
command lines and states (what the reaper freezes and the grader's own processes are
found by), and the plugin's own non-dumpable switch.

Part of TermGrade's attestation plugin (:mod:`termgrade_attest`), staged into it as one file
(``attestation._source``): it reads no state of the plugin's. Kept free of TermGrade
imports and of syntax newer than Python 3.8.
"""

from __future__ import annotations

import os


def _no_dump() -> bool:
    """Make this process non-dumpable (``PR_SET_DUMPABLE`` 0): no process of the
    container can then open its memory. False when that failed."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(4, 0, 0, 0, 0)) == 0  # PR_SET_DUMPABLE, 0
    except Exception:
        return False


def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, pgid) of ``pid``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        fields = raw[raw.rindex(b")") + 2:].split()
        return int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def _chain(pid: int) -> list[int]:
    """``pid`` and its parents, nearest first, up to a process whose parent is outside."""
    out: list[int] = []
    while pid > 1 and pid not in out:
        out.append(pid)
        info = _stat(pid)
        if info is None:
            break
        pid = info[0]
    return out


def _parents(pid: int) -> set[int]:
    """``pid`` and its parents (:func:`_chain`), as a set."""
    return set(_chain(pid))


def _start_time(pid: int) -> int:
    """When ``pid`` started (clock ticks since boot), or -1 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return int(raw[raw.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return -1


def _cmdline(pid: int) -> list[bytes]:
    """The command line of ``pid`` (its first 4096 bytes, split at NULs); [] when gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read(4096).split(b"\0")
    except OSError:
        return []


def _pids() -> set[int]:
    """Every process visible in ``/proc``."""
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


FROZEN = frozenset("TtZX")
"""Task states that run no code: stopped, traced-stopped, dead."""


def _state(pid: int) -> str:
    """The state letter of ``pid`` (``R``, ``S``, ``T``, ``Z``...), or "" when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return raw[raw.rindex(b")") + 2:][:1].decode()
    except (OSError, ValueError):
        return ""


def _frozen(pid: int) -> bool:
    """Every thread of ``pid`` stopped or dead (a zombie leader's threads may still run,
    and a process in the middle of a fork is not stopped yet): gone counts as frozen."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    return all(_state(int(tid)) in FROZEN or not _state(int(tid)) for tid in tids)
