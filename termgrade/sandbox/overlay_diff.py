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


_ABSENT, _HIDDEN, _SHOWN, _ALONE = range(4)
"""What one image layer has at a directory path (:meth:`LowerView._state`): nothing (the
deeper layers decide), a deletion or a non-directory there or above (nothing below the
path shows, from this layer or any deeper), a directory (deeper layers show through it),
or a directory that is opaque or lies in one (it shows, the deeper layers do not)."""


class LowerView:
    """Lookups in the image's layers (top first), for the few entries that need them,
    merged as the kernel merges them: a whiteout (a 0/0 character device) in a higher
    layer deletes what the deeper layers have at its path, and an opaque directory or any
    non-directory hides everything the deeper layers have below its path (an earlier
    ``RUN rm`` of the Dockerfile leaves exactly that). What each layer has at a directory
    is learnt once, when a lookup first passes it (one ``lstat`` and ``listxattr``), so a
    layer without whiteouts costs what a plain lookup costs."""

    def __init__(self, lower_dirs: list[str]) -> None:
        self.lower_dirs = lower_dirs
        self._states: list[dict[str, int]] = [{"": _SHOWN} for _ in lower_dirs]
        self._unchanged: dict[str, bool] = {}

    def _state(self, index: int, relative: str) -> int:
        """What layer ``index`` has at directory ``relative`` (no leading ``/``; ``""``
        is the root), cached with the states of the directories above it."""
        known = self._states[index]
        state = known.get(relative)
        if state is not None:
            return state
        chain = []
        parent = relative
        while parent not in known:
            chain.append(parent)
            parent = parent.rpartition("/")[0]
        state = known[parent]
        layer = self.lower_dirs[index]
        for each in reversed(chain):  # top down: each one's parent is a real directory
            if state in (_SHOWN, _ALONE):
                state = _dir_state(os.path.join(layer, each), alone=state == _ALONE)
            known[each] = state
        return state

    def _find(self, path: str) -> tuple[str, os.stat_result] | None:
        relative = path.strip("/")
        if not relative:
            return (self.lower_dirs[0], os.lstat(self.lower_dirs[0])) if self.lower_dirs \
                else None
        parent = relative.rpartition("/")[0]
        for index, lower in enumerate(self.lower_dirs):
            state = self._state(index, parent)
            if state == _ABSENT:
                continue
            if state == _HIDDEN:
                return None
            host = os.path.join(lower, relative)
            try:
                info = os.lstat(host)
            except FileNotFoundError:
                if state == _ALONE:
                    return None
                continue
            except OSError:
                # ENAMETOOLONG: nothing of the image's is there.
                return None
            if _is_whiteout(info):
                return None  # deleted by this layer
            return host, info
        return None

    def lstat(self, path: str) -> os.stat_result | None:
        """The image's entry at ``path`` (never following a symlink), or None where the
        image has nothing there (never had, or a layer deleted it)."""
        found = self._find(path)
        return found[1] if found is not None else None

    def host_path(self, path: str) -> str | None:
        """The host path of the image's entry at ``path`` (in the top-most layer that
        has it, and none that deleted it), or None; for reading an image file's bytes."""
        found = self._find(path)
        return found[0] if found is not None else None

    def listdir(self, path: str) -> set[str]:
        """The names the image's directory ``path`` holds (none where it has none)."""
        relative = path.strip("/")
        names: set[str] = set()
        seen: set[str] = set()
        for index, lower in enumerate(self.lower_dirs):
            state = self._state(index, relative)
            if state == _ABSENT:
                continue
            if state == _HIDDEN:
                break
            with os.scandir(os.path.join(lower, relative) if relative else lower) as found:
                for entry in found:
                    if entry.name in seen:
                        continue
                    seen.add(entry.name)
                    if entry.is_dir(follow_symlinks=False) or \
                            entry.is_file(follow_symlinks=False) or entry.is_symlink() \
                            or not _is_whiteout(entry.stat(follow_symlinks=False)):
                        names.add(entry.name)
            if state == _ALONE:
                break
        return names

    def text(self, path: str, limit: int) -> str:
        """The first ``limit`` bytes of the image's file at ``path`` as text (as the layers
        merge: a file a later layer deleted is none), or "" when it has none."""
        host = self.host_path(path)
        if host is None:
            return ""
        try:
            with open(host, "rb") as handle:
                return handle.read(limit).decode("utf-8", "replace")
        except OSError:
            return ""

    def unchanged(self, entry: UpperEntry) -> bool:
        """Is ``entry`` the image's own file or link as the image has it: the kernel's
        copy-up of a file opened for writing that nothing wrote to (``sqlite3`` querying a
        database), with the same type, mode, owner, modification time (a copy-up keeps
        it; ``touch`` does not), link count of one (a hard link the agent made to it is a
        change) and bytes (or link target)? Such an entry is no change: nothing to carry,
        nothing asked for. Reads both files only when the rest agrees. A file rewritten
        and written back as it was is the image's again by this look alone: the review
        during the tests does not excuse installed software so
        (:func:`termgrade.scoring.verifier.during.image_changes`)."""
        if entry.whiteout or entry.nlink != 1 \
                or not (stat.S_ISREG(entry.mode) or stat.S_ISLNK(entry.mode)):
            return False
        known = self._unchanged.get(entry.host_path)
        if known is None:  # the review and the look at what the tests changed both ask
            known = self._unchanged[entry.host_path] = self._same_as_image(entry)
        return known

    def _same_as_image(self, entry: UpperEntry) -> bool:
        found = self._find(entry.path)
        if found is None:
            return False
        host, info = found
        if (info.st_mode, info.st_uid, info.st_gid) != (entry.mode, entry.uid, entry.gid):
            return False
        try:
            if stat.S_ISLNK(entry.mode):
                return os.readlink(host) == os.readlink(entry.host_path)
            return info.st_size == entry.size \
                and os.lstat(entry.host_path).st_mtime_ns == info.st_mtime_ns \
                and _same_bytes(host, entry.host_path)
        except OSError:
            return False


def _is_whiteout(info: os.stat_result) -> bool:
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _same_bytes(first: str, second: str, chunk: int = 1 << 20) -> bool:
    with open(first, "rb") as one, open(second, "rb") as two:
        while True:
            a, b = one.read(chunk), two.read(chunk)
            if a != b:
                return False
            if not a:
                return True


def _dir_state(host: str, *, alone: bool) -> int:
    """What one layer has at ``host``, whose parent is a directory in that layer (``alone``:
    opaque, or inside an opaque directory)."""
    try:
        info = os.lstat(host)
    except OSError:  # FileNotFoundError; ENAMETOOLONG: nothing there
        return _HIDDEN if alone else _ABSENT
    if not stat.S_ISDIR(info.st_mode):
        return _HIDDEN  # a whiteout, a file, a link: nothing deeper shows below it
    if alone:
        return _ALONE
    try:
        marks = os.listxattr(host, follow_symlinks=False)
    except OSError:
        return _SHOWN
    return _ALONE if any(name in marks for name in OPAQUE_XATTRS) and _is_opaque(host) \
        else _SHOWN


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
