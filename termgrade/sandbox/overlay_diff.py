"""A container's writes, read straight from its overlay2 writable layer on the host.

The kernel records every write of the container in the upper directory, so nothing
inside the container can hide a change from this walk. It is one pass over the upper
directory, linear in the number of entries, bounded in entries and nesting, and never
touches the (large) image layers except for the few lookups a caller asks for.
Used only when the engine is local and uses overlay2; otherwise the caller falls back
to the engine's API diff.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from termgrade.sandbox.base import Change, ChangeKind
from termgrade.sandbox.errors import DiffTooLargeError

OPAQUE_XATTRS = ("trusted.overlay.opaque", "user.overlay.opaque")
MAX_ENTRIES = 2_000_000
"""Entries walked before the diff gives up (the agent made more changes than we grade)."""
MAX_RELATIVE_BYTES = 3000
"""Nesting deeper than this (bytes of path) is not walked: paths near PATH_MAX cannot be
read or copied reliably, so such an entry is reported ``too_deep`` and graded as a fault."""


@dataclass(slots=True)
class UpperEntry:
    """One entry of the writable layer."""

    path: str
    """Absolute path inside the container."""
    host_path: str
    mode: int
    """``st_mode`` of the entry itself (never follows a symlink)."""
    uid: int
    gid: int
    whiteout: bool = False
    """The entry records a deletion of what the image had there."""
    opaque: bool = False
    """A directory removed and made anew: nothing of the image's shows through it."""
    too_deep: bool = False
    """A directory nested past :data:`MAX_RELATIVE_BYTES`; its contents were not walked."""
    size: int = 0
    """Apparent size in bytes (``st_size``: a sparse file's full length)."""
    nlink: int = 1
    """Hard links to the entry's inode (``st_nlink``)."""

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode) and not self.whiteout


def _is_opaque(path: str) -> bool:
    for name in OPAQUE_XATTRS:
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def walk_upper(upper_dir: str, *, max_entries: int = MAX_ENTRIES) -> Iterator[UpperEntry]:
    """Every entry of ``upper_dir``, parents before children.

    Raises DiffTooLargeError past ``max_entries``; OSError if the layer is unreadable.
    """
    seen = 0
    stack = [""]
    while stack:
        relative_dir = stack.pop()
        with os.scandir(os.path.join(upper_dir, relative_dir) if relative_dir else upper_dir) \
                as entries:
            for entry in entries:
                seen += 1
                if seen > max_entries:
                    raise DiffTooLargeError(f"more than {max_entries} changed paths")
                relative = f"{relative_dir}/{entry.name}" if relative_dir else entry.name
                info = entry.stat(follow_symlinks=False)
                mode = info.st_mode
                is_dir = stat.S_ISDIR(mode)
                too_deep = is_dir and len(os.fsencode(relative)) > MAX_RELATIVE_BYTES
                yield UpperEntry(
                    "/" + relative, entry.path, mode, info.st_uid, info.st_gid,
                    stat.S_ISCHR(mode) and info.st_rdev == 0,
                    is_dir and _is_opaque(entry.path),
                    too_deep,
                    info.st_size,
                    info.st_nlink,
                )
                if is_dir and not too_deep:
                    stack.append(relative)


class LowerView:
    """Lookups in the image's layers (top first), for the few entries that need them."""

    def __init__(self, lower_dirs: list[str]) -> None:
        self.lower_dirs = lower_dirs

    def lstat(self, path: str) -> os.stat_result | None:
        relative = path.lstrip("/")
        for lower in self.lower_dirs:
            try:
                return os.lstat(os.path.join(lower, relative))
            except FileNotFoundError:
                continue
            except OSError:
                # ENAMETOOLONG, ENOTDIR: nothing of the image's is there.
                return None
        return None

    def listdir(self, path: str) -> set[str]:
        relative = path.lstrip("/")
        names: set[str] = set()
        for lower in self.lower_dirs:
            with_dir = os.path.join(lower, relative)
            if os.path.isdir(with_dir) and not os.path.islink(with_dir):
                names.update(os.listdir(with_dir))
        return names


def change_kind(entry: UpperEntry, lower: LowerView) -> ChangeKind:
    """Added, modified, deleted, or changed in type (a file that became a directory)."""
    if entry.whiteout:
        return ChangeKind.DELETED
    below = lower.lstat(entry.path)
    if below is None:
        return ChangeKind.ADDED
    if stat.S_IFMT(below.st_mode) != stat.S_IFMT(entry.mode):
        return ChangeKind.TYPE
    return ChangeKind.MODIFIED


def overlay_changes(upper_dir: str, lower_dirs: list[str]) -> list[Change]:
    """``docker diff`` semantics from the layers (every entry looked up below)."""
    lower = LowerView(lower_dirs)
    changes: list[Change] = []
    for entry in walk_upper(upper_dir):
        kind = change_kind(entry, lower)
        # docker diff reports a change of type as a modification.
        changes.append(Change(entry.path, ChangeKind.MODIFIED if kind is ChangeKind.TYPE else kind))
        if entry.opaque and kind is ChangeKind.MODIFIED:
            kept = set(os.listdir(entry.host_path))
            changes.extend(Change(f"{entry.path}/{name}", ChangeKind.DELETED)
                           for name in sorted(lower.listdir(entry.path) - kept))
    return changes


def upper_and_lower(attrs: dict[str, object]) -> tuple[str, list[str]] | None:
    """(UpperDir, LowerDirs) of a container's inspect data, when readable from here."""
    driver = attrs.get("GraphDriver")
    if not isinstance(driver, dict) or driver.get("Name") != "overlay2":
        return None
    data = driver.get("Data") or {}
    upper, lower = data.get("UpperDir"), data.get("LowerDir")
    if not isinstance(upper, str) or not isinstance(lower, str):
        return None
    if not Path(upper).is_dir() or not os.access(upper, os.R_OK | os.X_OK):
        return None
    return upper, lower.split(":")
