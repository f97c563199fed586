"""Where the broker watches, while the tests run, for names that appear and go and for files
written and restored (``incontainer/watch_names.py``), and what the host makes of what it
reports.

The look after the tests (:func:`termgrade.scoring.review.integrity.review_layer`) judges
what B's layer holds at the end. Agent code that runs during the tests (a service, a program
a test runs) can make a file where an image tool looks (a ``strict.pm`` first on Perl's
``@INC``, a ``json.py`` beside an image checker, a ``~/.gitconfig``), let a later test's
tool read it, and remove it; or write an image file a later test reads (through a hard link
made elsewhere too) and put its bytes and time back. The places watched are the stand-in
review's own: ``/`` (above the tests), ``/etc``, the homes, the tools' search paths (the
built-in ones and what test.sh's environment adds), the loader's directories, and the
directories of the image files and directories the task's texts name (inputs, the tests'
checkers and ground truth), and those named image files themselves (their inodes: a write
through a hard link made elsewhere is seen). A name gone by the end is judged by the same
stand-in review as one still there (:func:`gone_entries`); an image file written there is a
change even when its copy-up looks as the image had it, and a named file the watch saw no
write to is none even under ``/usr``
(:func:`termgrade.scoring.verifier.during.image_changes`).
"""

from __future__ import annotations

import posixpath
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from termgrade.sandbox.overlay_diff import LowerView, UpperEntry
from termgrade.scoring.review.image_globs import expand_pattern
from termgrade.scoring.review.lookups import SEARCH_PATHS
from termgrade.scoring.review.pathset import PathSet
from termgrade.scoring.review.tool_reads import user_homes
from termgrade.scoring.review.toolenv import ToolEnv
from termgrade.scoring.review.transfer import SCRATCH, TransferSet

__all__ = ["WATCH_SKIP", "Watched", "gone_entries", "watched"]

SEARCH_DEPTH = 3
"""Subdirectories of a search path watched (``File/Spec/Unix.pm`` below Perl's)."""
NAMED_DEPTH = 2
"""Subdirectories of a directory the task's texts name watched."""
HOME_DEPTH = 3
"""Subdirectories of a home watched (``~/.config/git``)."""
MAX_FILES_IN_NAMED = 256
"""Files of a named directory watched each (its first, by name)."""
_FIXED: tuple[tuple[str, int], ...] = (
    ("/", 0), ("/etc", 3), ("/root", HOME_DEPTH), ("/usr/local/lib", 1),
    ("/usr/lib/x86_64-linux-gnu", 0), ("/lib/x86_64-linux-gnu", 0),
    ("/usr/lib/aarch64-linux-gnu", 0), ("/lib/aarch64-linux-gnu", 0),
    ("/usr/lib/x86_64-linux-gnu/glibc-hwcaps", 1), ("/usr/lib/aarch64-linux-gnu/glibc-hwcaps", 1),
)
"""Watched in every image: above the tests, the system configuration, root's home (its
start-up files and tool configuration), the loader's and the compiler's own directories."""
WATCH_SKIP = (*SCRATCH, "/proc", "/sys", "/dev", "/tests", "/logs", "/var/log")
"""Never walked: scratch and caches, the tests (the broker's own watch), logs."""


@dataclass(frozen=True)
class Watched:
    """What the broker watches while the tests run."""

    roots: tuple[tuple[str, int], ...] = ()
    """(directory, depth): each walked that many levels down, every directory watched for
    names made and entries written through it."""
    files: frozenset[str] = frozenset()
    """Image files the task's texts name, each watched itself (its inode): a write of its
    bytes through any name of it (a hard link made elsewhere), its move or deletion, or
    its watch failing is reported as written. One not reported was at most opened: unless
    it is code (a write through a shared mapping raises no event), its copy-up as the
    image had it is no change, wherever it lies."""


def watched(lower: LowerView, tool_env: ToolEnv, transfer: TransferSet | None) -> Watched:
    """The directories (each an image directory: the fixed places, each home, the tools'
    search paths, what the task's texts name) and the named image files the broker
    watches."""
    roots = list(_image_roots(tuple(lower.lower_dirs)))
    for _kind, dirs in tool_env.search:
        roots += [(d, SEARCH_DEPTH) for d in dirs]
    files: set[str] = set()
    for root in transfer.roots if transfer is not None else ():
        found = lower.lstat(root.path)
        if found is None or root.why in ("accounts", "reference-dir"):
            continue
        if stat.S_ISREG(found.st_mode):  # any named image file (the reference's own run
            # has no input roots: what it did not write is no change it explains)
            files.add(root.path)
        if root.why == "workdir":
            continue  # the working directory as a whole: the agent's outputs churn there
        # a named directory: watched whether an input or (in the reference's own run, which
        # has no inputs yet) asked for, so the reference records what its tests make there
        if stat.S_ISDIR(found.st_mode):
            roots.append((root.path, NAMED_DEPTH))
            files.update(f"{root.path.rstrip('/')}/{n}"
                         for n in sorted(lower.listdir(root.path))[:MAX_FILES_IN_NAMED])
        else:
            roots.append((posixpath.dirname(root.path) or "/", 0))
    seen: dict[str, int] = {}
    for directory, depth in roots:
        if lower.lstat(directory) is not None:
            seen[directory] = max(depth, seen.get(directory, -1))
    skipped = PathSet(WATCH_SKIP)
    return Watched(tuple(sorted(seen.items())), frozenset(
        f for f in files if _regular(lower, f) and f not in skipped))


def _regular(lower: LowerView, path: str) -> bool:
    found = lower.lstat(path)
    return found is not None and stat.S_ISREG(found.st_mode)


@lru_cache(maxsize=16)
def _image_roots(layers: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    lower = LowerView(list(layers))
    roots = list(_FIXED)
    homes = {f"/home/{name}" for name in lower.listdir("/home")} | user_homes(lower)
    roots += [(home, HOME_DEPTH) for home in sorted(homes)]
    for patterns in SEARCH_PATHS.values():
        found = [d for pattern in patterns for d in expand_pattern(pattern, lower)]
        found = [d for d in found if _real_dir(lower, d)]  # a link to one: watched there
        # below the last directory of a search path nothing shadows anything
        roots += [(d, SEARCH_DEPTH if d != found[-1] else 0) for d in found]
    return tuple(roots)


def _real_dir(lower: LowerView, path: str) -> bool:
    found = lower.lstat(path)
    return found is not None and stat.S_ISDIR(found.st_mode)


def gone_entries(gone: Iterable[tuple[str, int]], present: set[str]) -> list[UpperEntry]:
    """What the broker saw appear and go, as layer entries the stand-in review can judge
    (no bytes: a rule that reads them finds nothing). What was made below a directory made
    while watched was watched too (a ``json/__init__.py``): each is judged by its own
    name."""
    return [UpperEntry(path, "/nonexistent", mode or 0o100755, 0, 0)
            for path, mode in gone if path not in present and path.startswith("/")]
