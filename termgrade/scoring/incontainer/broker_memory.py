"""Could another process read a keyed pytest's memory? Its dumpable flag and tracer, and
every other process's open files (each thread's table, an io_uring instance's registered
files), read with the asker's own filesystem identity.

Part of TermGrade's key broker (:mod:`termgrade_broker`), staged into it as one file
(``attestation._source``). Kept free of TermGrade imports and of syntax newer than Python
3.8.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any


def _libc() -> Any:
    """The C library, through ctypes (``prctl``, ``setfsuid``, ``setfsgid``)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def ids_of(pid: int) -> tuple[list[int], list[int], int] | None:
    """(uids, gids, TracerPid) of ``pid`` from ``/proc/PID/status`` (readable by anyone),
    or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    try:
        uids = [int(v) for v in fields["Uid"].split()]
        gids = [int(v) for v in fields["Gid"].split()]
        return uids, gids, int(fields["TracerPid"].strip())
    except (KeyError, ValueError):
        return None


def as_owner(pid: int, look: Any) -> Any:
    """``look()`` with this thread's filesystem uid and gid set to ``pid``'s, so the kernel's
    access check on ``/proc/PID`` (PTRACE_MODE_READ_FSCREDS) compares like with like: it
    then passes exactly when ``pid`` is dumpable. Raises PermissionError when ``pid``'s
    uids (or gids) differ among themselves: no filesystem identity matches it."""
    ids = ids_of(pid)
    if ids is None:
        raise ProcessLookupError(pid)
    uids, gids, _ = ids
    if len(set(uids[:3])) != 1 or len(set(gids[:3])) != 1:
        raise PermissionError(f"pid {pid} has mixed uids {uids} or gids {gids}")
    if uids[0] == os.geteuid() and gids[0] == os.getegid():
        return look()
    libc = _libc()
    libc.setfsgid(gids[0])
    libc.setfsuid(uids[0])
    try:
        return look()
    finally:
        libc.setfsuid(os.geteuid())
        libc.setfsgid(os.getegid())


def dumpable(pid: int) -> bool:
    """Can a process of ``pid``'s own user open its memory (``/proc/PID/environ`` takes
    the same check as ``mem``, for reading)? False once it made itself non-dumpable."""
    def look() -> bool:
        try:
            os.close(os.open(f"/proc/{pid}/environ", os.O_RDONLY | os.O_CLOEXEC))
            return True
        except PermissionError:
            return False
    try:
        return bool(as_owner(pid, look))
    except PermissionError:
        return False


IO_URING = "anon_inode:[io_uring]"


def io_uring_files(fdinfo: str) -> list[str]:
    """The files registered with an io_uring instance (its ``UserFiles`` in fdinfo: a
    handle no file table shows); one that cannot be read counts as a handle on
    anything (``/proc/?``)."""
    try:
        with open(fdinfo, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return ["/proc/?/io_uring"]
    files: list[str] = []
    inside, count = False, 0
    for line in text.splitlines():
        if line.startswith("UserFiles:"):
            inside = True
            with contextlib.suppress(ValueError):
                count = int(line.split(":", 1)[1])
        elif inside and line[:1].isspace() and ":" in line:
            files.append(line.split(":", 1)[1].strip())
        elif inside:
            inside = False
    return files if len(files) >= count else ["/proc/?/io_uring"]


def open_files(pid: int) -> list[str] | None:
    """What the file descriptors of ``pid`` and of each of its threads name (a thread
    cloned without ``CLONE_FILES`` has a table of its own, which ``/proc/PID/fd`` does
    not show); None when the kernel hides one from the broker (non-dumpable, or a thread
    of other credentials). Raises ProcessLookupError when ``pid`` is gone."""
    def look() -> list[str]:
        links = []
        for table in [f"/proc/{pid}/fd", *(f"/proc/{pid}/task/{t}/fd"
                                           for t in os.listdir(f"/proc/{pid}/task"))]:
            try:
                names = os.listdir(table)
            except FileNotFoundError:
                continue  # a thread that just ended
            for name in names:
                with contextlib.suppress(FileNotFoundError):
                    link = os.readlink(f"{table}/{name}")
                    links.append(link)
                    if link == IO_URING:  # its registered files are in no table: named here
                        links += io_uring_files(f"{table[:-2]}fdinfo/{name}")
        return links
    try:
        return list(as_owner(pid, look))
    except PermissionError:
        return None
    except FileNotFoundError as exc:
        raise ProcessLookupError(pid) from exc


def zombie(pid: int) -> bool:
    """Is ``pid`` a zombie, dead or gone (it holds no files then)?"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return raw[raw.rindex(b")") + 2:][:1] in (b"Z", b"X")
    except (OSError, ValueError):
        return True  # gone


def comm_of(pid: int) -> str:
    """The command name of ``pid`` (for messages); ``?`` when it is gone."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as handle:
            return handle.read().decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def key_exposed(pid: int, keep: set[int]) -> str | None:
    """None when no other process can read ``pid``'s memory once it holds a key; else why
    it could. ``pid`` must already be non-dumpable (then no process of the container,
    which has no CAP_SYS_PTRACE, can open its ``/proc/PID/mem``, ``ptrace`` it or
    ``process_vm_readv`` it) and untraced, and no process but those in ``keep`` (the
    broker, the sessions already keyed) may hold a file of ``/proc/PID`` or of one of its
    threads open: such a handle, opened while ``pid`` was still dumpable, reads its memory
    later. A process whose open files the kernel hides from the broker (non-dumpable, or
    of mixed uids) could hold one, so it too refuses the key."""
    ids = ids_of(pid)
    if ids is None:
        return "it vanished"
    if ids[2] != 0:
        return f"it is traced by pid {ids[2]}"
    if dumpable(pid):
        return "it is still dumpable (the plugin makes it non-dumpable before it asks): " \
            "another process could open its memory"
    try:
        mine = {pid, *(int(t) for t in os.listdir(f"/proc/{pid}/task") if t.isdigit())}
    except OSError:
        return "its threads are unreadable"
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in keep or int(name) in mine:
            continue
        other = int(name)
        if zombie(other):
            continue  # a zombie holds no files
        try:
            links = open_files(other)
        except ProcessLookupError:
            continue
        if links is None:
            return f"process {other} ({comm_of(other)}) hides its open files from the " \
                "broker (it is non-dumpable or has mixed uids): it may hold a handle on " \
                "the pytest process's memory"
        for link in links:
            if link == "/proc/?/io_uring":
                return f"process {other} ({comm_of(other)}) holds an io_uring instance " \
                    "whose registered files the broker cannot read: it may hold a handle " \
                    "on the pytest process's memory"
            parts = link.split("/")
            if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and (
                    int(parts[2]) in mine or (len(parts) > 4 and parts[3] == "task"
                                              and parts[4].isdigit()
                                              and int(parts[4]) in mine)):
                return f"process {other} ({comm_of(other)}) holds {link} open: it could " \
                    "read the pytest process's memory"
    return None
