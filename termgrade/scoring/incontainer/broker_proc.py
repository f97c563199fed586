"""The broker's reading of ``/proc``: a process's parent and executable, start time, command
line and working directory, and the files it maps that the agent may have written.

Part of TermGrade's key broker (:mod:`termgrade_broker`), staged into it as one file
(``attestation._source``). Kept free of TermGrade imports and of syntax newer than Python
3.8.
"""

from __future__ import annotations

import os
from typing import Any


def proc_stat(pid: int) -> tuple[int, str] | None:
    """(ppid, exe) of ``pid``, or None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        ppid = int(raw[raw.rindex(b")") + 2:].split()[1])
        exe = os.readlink(f"/proc/{pid}/exe")
    except (OSError, ValueError, IndexError):
        return None
    return ppid, exe


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot): with the pid, names one process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return int(raw[raw.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def argv_of(pid: int) -> list[str]:
    """The command line of ``pid`` as the kernel shows it now; [] when it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return []


def cwd_of(pid: int) -> str:
    """The working directory of ``pid``; ``/`` when unreadable."""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return "/"


def _under(path: str, roots: list[str] | frozenset[str]) -> bool:
    """Is ``path`` one of ``roots`` or below one? (Walks up ``path``'s parents: cheap for
    the many carried files the grader names.)"""
    wanted = roots if isinstance(roots, frozenset) else frozenset(r.rstrip("/") or "/"
                                                                  for r in roots)
    here = path
    while True:
        if here in wanted:
            return True
        if here in ("/", ""):
            return False
        here = here.rpartition("/")[0] or "/"


def foreign_mappings(pid: str, config: dict[str, Any]) -> list[str] | None:
    """Files mapped by ``pid`` that the agent may have written: deleted or memfd files,
    and files under the transfer roots that are not the closure's. None: unreadable."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    return foreign_in_maps(raw.decode("utf-8", "replace"), config)


def foreign_in_maps(text: str, config: dict[str, Any]) -> list[str]:
    """The paths in ``text`` (a ``/proc/PID/maps``) that the agent may have written:
    deleted or memfd files, anything not a path, and files under the transfer roots
    that are not the closure's (``config``'s ``trusted``)."""
    trusted = frozenset(r.rstrip("/") or "/" for r in config.get("trusted") or [])
    roots = frozenset(r.rstrip("/") or "/" for r in config.get("transfer_roots") or [])
    found: list[str] = []
    for line in text.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        path = fields[5]
        if path.startswith("[") or path.startswith("anon_inode:"):
            continue
        if path.endswith(" (deleted)") or path.startswith("/memfd:") or not path.startswith("/"):
            bad = True
        else:
            bad = _under(path, roots) and not _under(path, trusted)
        if bad and path not in found:
            found.append(path)
    return found
