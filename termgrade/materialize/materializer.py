"""``materialize(SOURCE, TASK_ID, to=DIR)``: a dataset row back to its task directory.

The archive is checked against ``archive_sha256``, unpacked by the safe unpacker into a
fresh temp dir inside DIR's parent, compared file by file with the row's ``files``
manifest (paths, sizes, sha256, modes), and only then renamed to DIR. Any refusal
removes the temp dir: nothing is ever written outside it, and DIR appears complete or
not at all. The result is byte-identical to the packed task (modes included), so
``termgrade run DIR`` works on it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from termgrade.materialize.errors import MaterializeError, UnsafeArchiveError
from termgrade.materialize.rows import TaskArchiveRow, find_row
from termgrade.materialize.safe_tar import ArchiveLimits, extract_archive
from termgrade.task.digest import REFERENCE_FILE, FileEntry


@dataclass(frozen=True)
class MaterializeResult:
    task_id: str
    path: Path
    n_files: int
    n_bytes: int
    source: str


def extracted_manifest(root: Path) -> list[FileEntry]:
    """Every file under ``root``, caches included (unlike the task manifest, nothing is
    skipped: a file the manifest does not list must not slip through)."""
    out = []
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):
            continue
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeArchiveError(f"{path}: not a regular file after extraction")
        out.append(FileEntry(path=path.relative_to(root).as_posix(), size=info.st_size,
                             sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                             mode=stat.S_IMODE(info.st_mode)))
    return out


def _manifest_problems(expected: list[FileEntry], found: list[FileEntry]) -> list[str]:
    want = {e.path: e for e in expected}
    have = {e.path: e for e in found}
    problems = [f"{p}: in the archive but not in the files manifest"
                for p in sorted(have.keys() - want.keys())]
    problems += [f"{p}: in the files manifest but not in the archive"
                 for p in sorted(want.keys() - have.keys())]
    for path in sorted(want.keys() & have.keys()):
        a, b = want[path], have[path]
        if (a.size, a.sha256) != (b.size, b.sha256):
            problems.append(f"{path}: content differs from the manifest "
                            f"({b.size} B {b.sha256[:12]} vs {a.size} B {a.sha256[:12]})")
        elif a.mode != b.mode:
            problems.append(f"{path}: mode {b.mode:o} differs from the manifest's {a.mode:o}")
    if len(want) != len(expected):
        problems.append("the files manifest lists a path twice")
    return problems


def unpack_row(row: TaskArchiveRow, to: Path, limits: ArchiveLimits | None = None) -> Path:
    """Check and unpack ``row`` into the new directory ``to`` (see the module docstring)."""
    to = Path(to).absolute()
    if to.is_symlink() or (to.exists() and (not to.is_dir() or any(to.iterdir()))):
        raise MaterializeError(f"{to} already exists and is not an empty directory",
                               fix="choose a new --to directory or remove that one")
    digest = hashlib.sha256(row.archive).hexdigest()
    if row.archive_sha256 and digest != row.archive_sha256:
        raise UnsafeArchiveError(f"{row.source}: archive of {row.task_id} hashes to "
                                 f"{digest[:12]}, the row says {row.archive_sha256[:12]}")
    to.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{to.name}.", suffix=".materialize", dir=to.parent))
    try:
        stage.chmod(0o755)
        extract_archive(row.archive, stage, limits)
        problems = _manifest_problems(row.files, extracted_manifest(stage))
        if problems:
            raise UnsafeArchiveError(f"{row.source}: archive of {row.task_id} does not match "
                                     "its files manifest:\n  " + "\n  ".join(problems[:20]))
        if row.reference_json:  # what the task was verified with, for a regrade
            (stage / REFERENCE_FILE).write_text(row.reference_json, encoding="utf-8")
        if to.exists():
            to.rmdir()
        os.replace(stage, to)
    except BaseException:
        _remove(stage)
        raise
    return to


def _remove(stage: Path) -> None:
    """Delete a partial tree, even one with read-only directories."""
    for path in [stage, *stage.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(stage, ignore_errors=True)


def materialize(source: str | Path, task_id: str, to: Path, *, revision: str | None = None,
                endpoint: str | None = None, token: str | None = None,
                limits: ArchiveLimits | None = None) -> MaterializeResult:
    """Recreate task ``task_id`` from ``source`` (parquet file, staged dir or repo id) at ``to``.

    A task's id is its directory's name, so ``to`` is only a location: the task is
    created at ``to`` when it is named ``task_id``, else at ``to/task_id`` (unpacked under
    another name, it would be graded as another task, matching no label)."""
    to = Path(to)
    if to.name != task_id:
        to = to / task_id
    row = find_row(str(source), task_id, revision=revision, endpoint=endpoint, token=token)
    path = unpack_row(row, to, limits)
    return MaterializeResult(row.task_id, path, len(row.files),
                             sum(f.size for f in row.files), row.source)
