"""The image's files changed while the tests ran, and whether that can be the tests' own.

Agent code runs during scoring (a service, a program a test runs). What it writes to the
carried work and to scratch is its own business; what it writes over an **image file**
(the tests' ground truth shipped in the image, a tool or a configuration a later test
reads) changes what a later test sees. The tests' own processes may change image files
too (a test that edits a configuration, a database a test starts writes its files), and
no byte says who wrote. The reference solution's run says which: the image files changed
while *its* tests ran are the tests' own (or its program's, which the task accepts). So:

- with a reference record that lists them, an image file a later test or tool trusts
  (:func:`trusted`: a program, a library, a file of the system trees, a start-up or tool
  configuration, a path only the tests name) changed while an agent's tests ran, that the
  reference's run did not change, is a finding (agent code rewrote what the tests read);
  other data it did not change (a service's database pages) is said;
- without one, the changes are said in the verifier's output, never zeroed.

Scratch, logs, caches, the grader's paths, the verifier's install roots and the paths
the task asks the agent to change are not judged (the carried work lives there).
"""

from __future__ import annotations

import posixpath
import stat
from collections.abc import Iterable

from termgrade.sandbox.overlay_diff import LowerView, UpperEntry
from termgrade.scoring.standins import STARTUP_NAMES, TOOL_CONFIG_NAMES, is_shared_object
from termgrade.scoring.transfer import ACCOUNT_FILES, SCRATCH, TransferSet

__all__ = ["NOT_JUDGED", "image_changes", "trusted", "unexplained"]

NOT_JUDGED = (*SCRATCH, "/var/log", "/var/lib/systemd", "/etc/ld.so.cache", "/etc/mtab",
              "/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/root/.bash_history",
              "/root/.python_history", "/root/.lesshst", "/root/.viminfo")
"""Where processes write as they run (scratch, logs, histories, caches) and what the
engine or the grader's ``ldconfig`` rewrites in B: no later test trusts these."""
MAX_LISTED = 20


def _under(path: str, prefixes: Iterable[str]) -> bool:
    return any(path == p or path.startswith(f"{p.rstrip('/')}/") for p in prefixes)


def image_changes(entries: Iterable[UpperEntry], lower: LowerView, *,
                  carried: frozenset[str], transfer: TransferSet | None,
                  skip: tuple[str, ...]) -> list[tuple[str, bool]]:
    """The image's files (and symlinks) that B's layer changed or deleted beyond what was
    carried into it before B started, each with whether a later test or tool trusts it
    (:func:`trusted`), sorted by path. ``skip``: the grader's own paths."""
    changed = []
    for entry in entries:
        path = entry.path
        if entry.is_dir and not entry.whiteout:  # copied up to hold a child: not a change
            continue
        if path in carried or "/__pycache__/" in path or path.endswith("/__pycache__") \
                or _under(path, NOT_JUDGED) or _under(path, skip) or path in ACCOUNT_FILES:
            continue
        below = lower.lstat(path)
        if below is None or stat.S_ISDIR(below.st_mode):
            continue  # created while the tests ran: the stand-in review's to judge
        if transfer is not None and transfer.carries_changes(path):
            continue  # where the task asks for the agent's changes: its outputs
        changed.append((path, trusted(path, below.st_mode | (0 if entry.whiteout
                                                            else entry.mode), transfer)))
    return sorted(changed)


SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Where the image's tools, libraries and their configuration live."""


def trusted(path: str, mode: int, transfer: TransferSet | None) -> bool:
    """Would a later test or tool trust this image file: a program or library (an exec
    bit before or after, a shared object's name), a file of the system trees (tools and
    their configuration), a start-up or tool configuration file in a home, or a path only
    the tests name (their ground truth)? Other data (a service's database pages, a
    project's files) the tests read as the agent's service left it."""
    name = posixpath.basename(path)
    return bool(mode & 0o111) or is_shared_object(name) or _under(path, SYSTEM_TREES) \
        or name in STARTUP_NAMES or name in TOOL_CONFIG_NAMES \
        or (transfer is not None and transfer.tests_only(path))


def unexplained(changed: list[str], reference: Iterable[str]) -> list[str]:
    """What of ``changed`` the reference's run did not change (a path, or one below a
    directory it changed)."""
    known = set(reference)
    return [p for p in changed
            if p not in known and not any(p.startswith(f"{k.rstrip('/')}/") for k in known)]
