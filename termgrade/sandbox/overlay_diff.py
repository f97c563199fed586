"""``docker diff`` read straight from an overlay2 container's writable layer.

The engine's own diff takes ~0.6 s per container here; walking the upper directory
on the host takes milliseconds and reports the same changes: the kernel's view of the
container's writes, which nothing inside the container can hide. Used only when the
engine is local and uses overlay2; otherwise the caller falls back to the API.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from termgrade.sandbox.base import Change, ChangeKind

OPAQUE_XATTRS = ("trusted.overlay.opaque", "user.overlay.opaque")


def _is_whiteout(entry: os.DirEntry[str]) -> bool:
    info = entry.stat(follow_symlinks=False)
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == 0


def _is_opaque(path: str) -> bool:
    for name in OPAQUE_XATTRS:
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def _walk(upper: str, relative: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
    with os.scandir(os.path.join(upper, relative) if relative else upper) as entries:
        for entry in entries:
            yield (f"{relative}/{entry.name}" if relative else entry.name), entry


def overlay_changes(upper_dir: str, lower_dirs: list[str]) -> list[Change]:
    """Changes in ``upper_dir`` relative to the stacked ``lower_dirs`` (top first)."""

    def in_lower(relative: str) -> bool:
        return any(os.path.lexists(os.path.join(lower, relative)) for lower in lower_dirs)

    changes: list[Change] = []
    stack = [""]
    while stack:
        directory = stack.pop()
        for relative, entry in _walk(upper_dir, directory):
            path = "/" + relative
            if _is_whiteout(entry):
                changes.append(Change(path, ChangeKind.DELETED))
                continue
            existed = in_lower(relative)
            is_dir = entry.is_dir(follow_symlinks=False)
            changes.append(Change(path, ChangeKind.MODIFIED if existed else ChangeKind.ADDED))
            if is_dir and existed and _is_opaque(entry.path):
                # Removed and made anew: what the layers below held there is gone.
                kept = set(os.listdir(entry.path))
                below = {name for lower in lower_dirs
                         if os.path.isdir(os.path.join(lower, relative))
                         for name in os.listdir(os.path.join(lower, relative))}
                changes.extend(Change(f"{path}/{name}", ChangeKind.DELETED)
                               for name in sorted(below - kept))
            if is_dir:
                stack.append(relative)
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
