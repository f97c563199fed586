"""The file manifest and content digest of a task directory."""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass
from pathlib import Path

IGNORED_NAMES = frozenset({"__pycache__", ".pytest_cache", ".DS_Store", ".mypy_cache"})


@dataclass(frozen=True)
class FileEntry:
    path: str
    """POSIX path relative to the task directory."""
    size: int
    sha256: str
    mode: int
    """Permission bits (e.g. 0o755), which the Hub does not keep."""


def iter_task_files(root: Path) -> list[Path]:
    """Regular files under ``root``, sorted, skipping caches. Symlinks are refused."""
    files = []
    for path in sorted(root.rglob("*")):
        if any(part in IGNORED_NAMES for part in path.relative_to(root).parts):
            continue
        if path.is_symlink():
            raise ValueError(f"{path}: symlinks are not allowed in a task directory")
        if path.is_file():
            files.append(path)
    return files


def task_manifest(root: Path) -> list[FileEntry]:
    entries = []
    for path in iter_task_files(root):
        data = path.read_bytes()
        entries.append(FileEntry(
            path=path.relative_to(root).as_posix(),
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            mode=stat.S_IMODE(path.stat().st_mode),
        ))
    return entries


def task_digest(root: Path) -> str:
    """sha256 over every file's path, mode and content: changes when the task does."""
    h = hashlib.sha256()
    for entry in task_manifest(root):
        h.update(f"{entry.path}\0{entry.mode:o}\0{entry.sha256}\n".encode())
    return h.hexdigest()
