"""The file manifest and content digest of a task directory."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from termgrade.task.errors import TaskLoadError

MODES_FILE = ".termgrade-modes.json"
"""The modes a staged task's files and directories had when it was built, written by
``termgrade build`` into each ``tasks/<task_id>/``. The Hub keeps no file modes (``hf
download`` writes every file 0o644 or so), so a task read back from a download takes its
modes from this record: its digest, manifest and archive equal the published row's."""
MODES_VERSION = 1
REFERENCE_FILE = ".termgrade-reference.json"
"""The reference solution's recorded run (``verify``'s footprint and per-test outcomes),
shipped in each staged task's folder and written by ``materialize``: a task regraded from
a published repo is graded against the reference its rows were verified with. Not part
of the task's content (its digest leaves it out); it names the digest it is for."""

IGNORED_NAMES = frozenset({"__pycache__", ".pytest_cache", ".DS_Store", ".mypy_cache",
                           MODES_FILE, REFERENCE_FILE})


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


def write_modes(root: Path, tree: TaskTree) -> Path:
    """Record ``tree``'s modes in ``root``/:data:`MODES_FILE` (a staged copy of it)."""
    record = {"schema_version": MODES_VERSION,
              "dirs": {name: f"{mode:o}" for name, mode in tree.dirs},
              "files": {f.path: f"{f.mode:o}" for f in tree.files}}
    path = Path(root) / MODES_FILE
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def recorded_modes(root: Path) -> dict[str, int]:
    """Path -> mode from ``root``/:data:`MODES_FILE` (files and directories; empty when
    there is none). A record that cannot be read raises :class:`TaskLoadError`."""
    path = Path(root) / MODES_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema_version") != MODES_VERSION:
            raise ValueError(f"schema_version {data.get('schema_version')!r} is not "
                             f"{MODES_VERSION}")
        return {str(name): int(mode, 8) for kind in ("dirs", "files")
                for name, mode in data[kind].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TaskLoadError(path, f"unreadable mode record: {exc}",
                            fix="rebuild the repo with `termgrade build`, or delete the file "
                            "to take the modes on disk") from None


def restore_modes(root: Path) -> int:
    """chmod ``root``'s files and directories whose mode a download wrote
    (:func:`as_downloaded`) to their recorded modes, so that what runs (a Docker build
    context, a script) is what the digest says; returns how many changed."""
    changed = 0
    for name, mode in recorded_modes(root).items():
        target = Path(root) / name
        if not target.exists() or target.is_symlink():
            continue
        now = stat.S_IMODE(target.stat().st_mode)
        if now != mode and as_downloaded(now, target.is_dir()):
            os.chmod(target, mode)
            changed += 1
    return changed


def as_downloaded(mode: int, is_dir: bool) -> bool:
    """Whether ``mode`` is one a download writes whatever the file was (0o666 or 0o777
    under some umask: owner read-write, no execute bit on a file; owner rwx on a
    directory; no setuid, setgid or sticky bit). Such a mode says nothing of the task,
    and the record stands for it; any other was set on purpose and counts as it is."""
    if mode & 0o7000:
        return False
    if is_dir:
        return mode & 0o700 == 0o700
    return mode & 0o600 == 0o600 and not mode & 0o111


def read_tree(root: Path) -> TaskTree:
    """Every directory and regular file under ``root`` in one walk, caches skipped, as
    :func:`iter_task_files` and :func:`termgrade.task.archive.task_dirs` see them.
    Symlinks and names that are not UTF-8 are refused (:class:`TaskLoadError`).
    A mode recorded in :data:`MODES_FILE` stands for a mode on disk that a download
    writes (:func:`as_downloaded`): the Hub drops modes, the record is what the task was
    built with; a mode set on purpose (0o700, 0o755 where 0o644 was recorded) counts."""
    root = Path(root)
    recorded = recorded_modes(root)
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
            mode = stat.S_IMODE(info.st_mode)
            if rel in recorded and as_downloaded(mode, stat.S_ISDIR(info.st_mode)):
                mode = recorded[rel]
            if stat.S_ISDIR(info.st_mode):
                dirs.append((rel, mode))
            elif stat.S_ISREG(info.st_mode):
                with open(full, "rb") as handle:
                    data = handle.read()
                files.append((tuple(rel.split("/")), TreeFile(rel, mode, data)))
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


AGENT_UNSEEN = frozenset({"tests", "solution"})
"""The task's folders the agent never sees: a change there leaves its work as it was."""


def agent_side_digest(root: Path) -> str:
    """sha256 over what the agent saw and acted in: every file outside ``tests/`` and
    ``solution/`` (the instruction, the environment) and ``task.toml`` less its
    ``[verifier]`` table. A trial's work can be regraded against the task as it is now
    only while this is unchanged (``termgrade regrade``); otherwise the agent would have
    acted differently and must run again."""
    import tomllib

    h = hashlib.sha256()
    for entry in task_manifest(root):
        if entry.path.split("/", 1)[0] in AGENT_UNSEEN:
            continue
        if entry.path == "task.toml":
            try:
                config = tomllib.loads((Path(root) / entry.path).read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise TaskLoadError(Path(root) / entry.path, f"unreadable: {exc}",
                                    fix="fix the TOML") from None
            config.pop("verifier", None)
            h.update(f"task.toml\0{json.dumps(config, sort_keys=True, default=str)}\n"
                     .encode())
            continue
        h.update(f"{entry.path}\0{entry.mode:o}\0{entry.sha256}\n".encode())
    return h.hexdigest()
