"""The image's files changed while the tests ran, and whether that can be the tests' own.

Agent code runs during scoring (a service, a program a test runs). What it writes to the
carried work and to scratch is its own business; what it writes over an **image file**
(the tests' ground truth shipped in the image, a tool or a configuration a later test
reads) changes what a later test sees. The tests' own processes may change image files
too (a test that edits a configuration, a database a test starts writes its files), and
no byte says who wrote. The reference solution's run says which: the image files changed
while *its* tests ran are the tests' own (or its program's, which the task accepts). So:

- installed software (a program, a library, an interpreter's source file, a file under
  ``/usr`` or ``/etc/alternatives``: :class:`Trust`) changed while the tests ran is a
  finding unless the reference's run changed it too: no test rewrites the image's
  software;
- with a reference record that lists its changes, an image file a later test or tool
  trusts (a file of ``/etc``, a start-up or tool configuration, a path only the tests
  name: their ground truth) changed beyond those is a finding (agent code rewrote what
  the tests read); other data beyond them (a service's database pages) is said;
- without one, the changes other than software are said in the verifier's output, never
  zeroed (a test may write a configuration or its own input there).

Scratch, logs, caches, the grader's paths, the verifier's install roots and the paths
the task asks the agent to change are not judged (the carried work lives there).
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterable
from enum import IntEnum

from termgrade.sandbox.overlay_diff import LowerView, UpperEntry
from termgrade.scoring.review.standins import is_shared_object, startup_or_config
from termgrade.scoring.review.transfer import ACCOUNT_FILES, SCRATCH, TransferSet

__all__ = ["NOT_JUDGED", "Trust", "account_texts", "identities", "image_changes", "trust",
           "unexplained", "written_through"]

NOT_JUDGED = (*SCRATCH, "/var/log", "/var/lib/systemd", "/etc/ld.so.cache", "/etc/mtab",
              "/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/root/.bash_history",
              "/root/.python_history", "/root/.lesshst", "/root/.viminfo")
"""Where processes write as they run (scratch, logs, histories, caches) and what the
engine or the grader's ``ldconfig`` rewrites in B: no later test trusts these."""
MAX_LISTED = 20


def _under(path: str, prefixes: Iterable[str]) -> bool:
    return any(path == p or path.startswith(f"{p.rstrip('/')}/") for p in prefixes)


class Trust(IntEnum):
    """How far a later test or tool trusts an image file (see :func:`trust`)."""

    DATA = 0
    TRUSTED = 1
    SOFTWARE = 2


def image_changes(entries: Iterable[UpperEntry], lower: LowerView, *,
                  carried: frozenset[str], transfer: TransferSet | None,
                  skip: tuple[str, ...],
                  accounts: dict[str, str] | None = None,
                  written: frozenset[str] = frozenset(),
                  watched: frozenset[str] = frozenset()) -> list[tuple[str, Trust]]:
    """The image's files (and symlinks) that B's layer changed or deleted beyond what was
    carried into it before B started, each with how far a later test or tool trusts it
    (:func:`trust`), sorted by path. ``skip``: the grader's own paths. ``accounts``: the
    account databases as carried into B (merged: a new user joined an image group),
    read before the tests: the yardstick of their image entries, in place of the image's.
    ``written``: entries the broker saw written while the tests ran (its watched
    directories): a copy-up of one is a change even when it looks as the image had it;
    ``watched``: image files the broker watched themselves (their inodes), which saw every
    write through any name: one not ``written`` was at most opened for writing, whatever
    it is (installed software included: ``sqlite3`` querying a named database under
    ``/usr``)."""
    changed = []
    for entry in entries:
        path = entry.path
        if entry.is_dir and not entry.whiteout:  # copied up to hold a child: not a change
            continue
        if path in ACCOUNT_FILES:  # new users (the agent's carried, a test's) are theirs;
            # an image entry changed (a login shell) is not, carried or not
            asked = transfer is not None and transfer.asked_exactly(path)
            if not asked and _image_entries_changed(entry, lower, (accounts or {}).get(path)):
                changed.append((path, Trust.TRUSTED))
            continue
        if path in carried or _under(path, NOT_JUDGED) or _under(path, skip):
            continue
        below = lower.lstat(path)
        if below is None or stat.S_ISDIR(below.st_mode):
            continue  # created while the tests ran: the stand-in review's to judge
        if transfer is not None and transfer.carries_changes(path):
            continue  # where the task asks for the agent's changes: its outputs
        program = _program(entry.host_path, entry.mode) if not entry.whiteout else False
        program = program or _program(_image_path(lower, path), below.st_mode)
        level = trust(path, program, transfer)
        if _excused(level, path in watched and not _code(path, program)) \
                and path not in written and lower.unchanged(entry):
            continue  # opened for writing, never written (sqlite3 on a database it reads);
            # installed software and configuration are never opened so: one written back
            # as it was (a fake that answered, then restored the image's bytes, through a
            # hard link made elsewhere too) is still a change, unless it is a named file the
            # broker watched itself and saw no write to that is not code (a write through a
            # shared mapping raises no event: a checker is never excused)
        changed.append((path, level))
    return sorted(changed)


def _excused(level: Trust, watched: bool) -> bool:
    """May a copy-up as the image had it be no change? Data's (opened for writing,
    never written), and a named file's the broker watched itself that is not code."""
    return level == Trust.DATA or watched


def _code(path: str, program: bool) -> bool:
    """Is this file code (a program, a shared object, an interpreter's source)?"""
    name = posixpath.basename(path)
    return program or is_shared_object(name) or posixpath.splitext(name)[1] in CODE_SUFFIXES


def _image_path(lower: LowerView, path: str) -> str | None:
    return lower.host_path(path)  # the image's, as its layers merge (whiteouts too)


def _program(host: str | None, mode: int) -> bool:
    """Is this a program (a regular file with an exec bit that is an ELF binary or starts
    with ``#!``)? A data file someone made world-writable and executable is not."""
    if host is None or not stat.S_ISREG(mode) or not mode & 0o111:
        return False
    try:
        with open(host, "rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    return head == b"\x7fELF" or head.startswith(b"#!")


def _image_entries_changed(entry: UpperEntry, lower: LowerView,
                           carried: str | None = None) -> bool:
    """Did an account database lose or change one of the image's own lines (a user's
    login shell, home or groups), beyond lines added? ``carried``: the database as
    carried into B, whose lines stand for the image's."""
    if entry.whiteout:
        return True
    image = carried if carried is not None else _text(_image_path(lower, entry.path))
    now = _text(entry.host_path)
    if image is None or now is None:
        return now is None and image is not None
    lines = {line.split(":", 1)[0]: line for line in now.splitlines() if ":" in line}
    return any(lines.get(line.split(":", 1)[0]) != line
               for line in image.splitlines() if ":" in line)


def account_texts(upper: str) -> dict[str, str]:
    """The account databases in B's writable layer ``upper`` (what was carried), by path."""
    found = {}
    for path in ACCOUNT_FILES:
        text = _text(os.path.join(upper, path.lstrip("/")))
        if text is not None:
            found[path] = text
    return found


def _text(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_ACCOUNT_BYTES)
    except OSError:
        return None


MAX_ACCOUNT_BYTES = 1 << 22
SOFTWARE_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                  "/etc/alternatives")
"""Where the image's installed software lives: no test rewrites it."""
LOADER_CONFIG = ("/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
                 "/etc/nsswitch.conf", "/etc/ssl", "/etc/perl", "/etc/python3")
"""Configuration the loader, libc and interpreters read on every start."""
CODE_SUFFIXES = frozenset({".py", ".pyc", ".pm", ".pmc", ".pl", ".rb", ".js", ".mjs", ".cjs",
                           ".sh", ".bash", ".lua", ".php", ".tcl", ".jar", ".class", ".so",
                           ".awk", ".sed", ".jq", ".r", ".R", ".mk", ".bats", ".zsh"})


def trust(path: str, program: bool, transfer: TransferSet | None) -> Trust:
    """``SOFTWARE``: code (a program, a shared object, a source file an interpreter runs)
    or a file of the installed software trees (``/usr``, ``/etc/alternatives``...): tests
    never rewrite it. ``TRUSTED``: configuration a tool or the loader reads on start (a
    start-up or tool configuration, ``/etc/ld.so.conf``...), or a path only the tests name
    (their ground truth): a test may write one, so the reference's run tells. ``DATA``:
    anything else (a service's database pages, ``/etc/timezone``), which the tests read
    as the agent's program left it."""
    if _code(path, program) or _under(path, SOFTWARE_TREES):
        return Trust.SOFTWARE
    if startup_or_config(path) or _under(path, LOADER_CONFIG) \
            or (transfer is not None and transfer.tests_only(path)):
        return Trust.TRUSTED
    return Trust.DATA


def unexplained(changed: list[str], reference: Iterable[str]) -> list[str]:
    """What of ``changed`` the reference's run did not change (a path, or one below a
    directory it changed)."""
    known = set(reference)
    return [p for p in changed
            if p not in known and not any(p.startswith(f"{k.rstrip('/')}/") for k in known)]


Identity = tuple[int, int, int, int] | None
"""A file of B's layer as the host sees it: inode, size, modification and change times
(no process can set a change time back); None: not in the layer (the image's, or gone)."""


def identities(upper: str, paths: Iterable[str]) -> dict[str, Identity]:
    """The identity of each of ``paths`` in B's writable layer ``upper``."""
    found: dict[str, Identity] = {}
    for path in paths:
        try:
            st = os.lstat(os.path.join(upper, path.lstrip("/")))
        except OSError:
            found[path] = None
            continue
        found[path] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


def written_through(upper: str, links: dict[str, str],
                    before: dict[str, Identity]) -> list[str]:
    """Findings for the agent's watched links (``links``: link -> the file it resolves
    to: a link at a path only the tests name, or any link the agent made to a file of the
    image's) whose file changed while the tests ran: a write through the link landed where
    it points (the tests' expected value as the agent's answer)."""
    after = identities(upper, before)
    return [f"M {target}: written through {link} while the tests ran (a link the agent "
            "made: what was written there landed in the file it points to)"
            for link, target in sorted(links.items())
            if target in before and after.get(target) != before[target]]

