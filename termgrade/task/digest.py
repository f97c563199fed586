"""The file manifest and content digest of a task directory."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from termgrade.core.errors import TaskLoadError

IGNORED_NAMES = frozenset({"__pycache__", ".pytest_cache", ".DS_Store", ".mypy_cache"})


@dataclass(frozen=True)
class FileEntry:
    path: str
    """POSIX path relative to the task directory."""
    size: int
    sha256: str
    mode: int
    """Permission bits (e.g. 0o755), which the Hub does not keep."""


def shown(path: str | Path) -> str:
    """A path as a message can print it: bytes that are not UTF-8 as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def check_entry(full: str | Path, is_link: bool) -> None:
    """Refuse a task entry the dataset cannot hold: a symlink, or a name that is not
    UTF-8 (an archive member, a manifest path and a parquet string must be text)."""
    if is_link:
        raise TaskLoadError(Path(shown(full)), "is a symlink: a task holds regular files "
                            "and directories only (archives and the Hub keep no links)",
                            fix="replace the link with the file it points to, or remove it")
    try:
        os.fspath(full).encode("utf-8")
    except UnicodeEncodeError:
        raise TaskLoadError(Path(shown(full)), "file name is not valid UTF-8",
                            fix="rename it to a UTF-8 name") from None


def check_task_files(root: Path) -> None:
    """Raise :class:`TaskLoadError` for the first symlink or non-UTF-8 name under
    ``root`` (caches skipped), as :func:`read_tree` would."""
    for top, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_NAMES]
        for name in [*dirnames, *filenames]:
            if name not in IGNORED_NAMES:
                full = os.path.join(top, name)
                check_entry(full, os.path.islink(full))


def iter_task_files(root: Path) -> list[Path]:
    """Regular files under ``root``, sorted, skipping caches. Symlinks and names that
    are not UTF-8 are refused (:class:`TaskLoadError`)."""
    files = []
    for path in sorted(root.rglob("*")):
        if any(part in IGNORED_NAMES for part in path.relative_to(root).parts):
            continue
        check_entry(path, path.is_symlink())
        if path.is_file():
            files.append(path)
    return files


@dataclass(frozen=True)
class TreeFile:
    path: str
    """POSIX path relative to the task directory."""
    mode: int
    data: bytes


@dataclass(frozen=True)
class TaskTree:
    """A task directory read once: what its manifest, digest and archive are made of."""

    dirs: tuple[tuple[str, int], ...]
    """(relative POSIX path, permission bits) of every directory, empty ones included."""
    files: tuple[TreeFile, ...]
    """Regular files in manifest order (:func:`iter_task_files`' order)."""

    @cached_property
    def _entries(self) -> tuple[FileEntry, ...]:
        return tuple(FileEntry(path=f.path, size=len(f.data),
                               sha256=hashlib.sha256(f.data).hexdigest(), mode=f.mode)
                     for f in self.files)

    def manifest(self) -> list[FileEntry]:
        return list(self._entries)

    def fingerprint(self) -> str:
        """sha256 over the directories and the files (paths, modes, contents)."""
        h = hashlib.sha256()
        for name, mode in self.dirs:
            h.update(f"d\0{name}\0{mode:o}\n".encode())
        h.update(manifest_digest(self.manifest()).encode())
        return h.hexdigest()


def read_tree(root: Path) -> TaskTree:
    """Every directory and regular file under ``root`` in one walk, caches skipped, as
    :func:`iter_task_files` and :func:`termgrade.task.archive.task_dirs` see them.
    Symlinks and names that are not UTF-8 are refused (:class:`TaskLoadError`)."""
    root = Path(root)
    dirs: list[tuple[str, int]] = []
    files: list[tuple[tuple[str, ...], TreeFile]] = []
    for top, dirnames, filenames in os.walk(root):
        rel_top = Path(top).relative_to(root).as_posix()
        prefix = "" if rel_top == "." else rel_top + "/"
        dirnames[:] = [d for d in dirnames if d not in IGNORED_NAMES]
        for name in [*dirnames, *filenames]:
            if name in IGNORED_NAMES:
                continue
            full = os.path.join(top, name)
            info = os.lstat(full)
            check_entry(full, stat.S_ISLNK(info.st_mode))
            rel = prefix + name
            if stat.S_ISDIR(info.st_mode):
                dirs.append((rel, stat.S_IMODE(info.st_mode)))
            elif stat.S_ISREG(info.st_mode):
                with open(full, "rb") as handle:
                    data = handle.read()
                files.append((tuple(rel.split("/")),
                              TreeFile(rel, stat.S_IMODE(info.st_mode), data)))
    files.sort(key=lambda item: item[0])  # Path order: part by part
    return TaskTree(dirs=tuple(sorted(dirs)), files=tuple(f for _, f in files))


def manifest_digest(entries: list[FileEntry]) -> str:
    """sha256 over every file's path, mode and content hash (``task_digest``)."""
    h = hashlib.sha256()
    for entry in entries:
        h.update(f"{entry.path}\0{entry.mode:o}\0{entry.sha256}\n".encode())
    return h.hexdigest()


def task_manifest(root: Path) -> list[FileEntry]:
    return read_tree(root).manifest()


def task_digest(root: Path) -> str:
    """sha256 over every file's path, mode and content: changes when the task does."""
    return manifest_digest(task_manifest(root))
