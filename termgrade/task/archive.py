"""The exact, deterministic archive of a task directory (the ``archive`` column).

Format: an uncompressed POSIX (PAX) tar, entries sorted by path, directories included
with their modes, regular files only (symlinks are refused), uid = gid = 0, empty
uname / gname, mtime 0, file modes kept, paths relative to the task directory with no
leading ``./``; then gzip at level 9 with mtime 0 and no file name, one member. The same
directory always packs to the same tar stream, and with the same zlib to the same bytes,
so ``archive_sha256`` identifies a task's content. :func:`gunzip_packed` reads the tar
stream back from an archive gzipped so (``validate`` compares that stream with the tree's).

:func:`list_archive` reads an archive back into a manifest (in memory, nothing is
written); the safe unpacker that writes to disk is :mod:`termgrade.materialize`.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from termgrade.task.digest import IGNORED_NAMES, FileEntry, TaskTree, read_tree

MAX_LISTED_BYTES = 2 * 1024**3
""":func:`list_archive` refuses archives that expand past this many bytes."""


def task_dirs(root: Path) -> list[Path]:
    """Directories under ``root`` (empty ones included), caches and symlinks skipped."""
    dirs = []
    for path in root.rglob("*"):
        if any(part in IGNORED_NAMES for part in path.relative_to(root).parts):
            continue
        if path.is_dir() and not path.is_symlink():
            dirs.append(path)
    return dirs


def _info(name: str, *, mode: int, kind: bytes, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.size = size
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def pack_task(root: Path) -> bytes:
    """The deterministic ``.tar.gz`` bytes of the task directory ``root``."""
    return pack_tree(read_tree(root))


def pack_tree(tree: TaskTree) -> bytes:
    """The deterministic ``.tar.gz`` bytes of a task directory already read."""
    return _gzip(tar_tree(tree))


def tar_tree(tree: TaskTree) -> bytes:
    """The deterministic tar stream (before gzip) of a task directory already read."""
    entries: list[tuple[str, int, bytes | None]] = [
        *((name, mode, None) for name, mode in tree.dirs),
        *((f.path, f.mode, f.data) for f in tree.files)]
    entries.sort(key=lambda item: item[0])
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, mode, data in entries:
            if data is None:
                tar.addfile(_info(name, mode=mode, kind=tarfile.DIRTYPE))
                continue
            tar.addfile(_info(name, mode=mode, kind=tarfile.REGTYPE, size=len(data)),
                        io.BytesIO(data))
    return raw.getvalue()


def _gzip(raw: bytes) -> bytes:
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=packed, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    return packed.getvalue()


GZIP_HEADER = _gzip(b"")[:10]
"""The 10-byte gzip header of every archive :func:`pack_tree` writes (no flags, mtime 0,
the level-9 flag, OS unknown)."""


def gunzip_packed(archive: bytes, *, max_bytes: int = MAX_LISTED_BYTES) -> bytes | None:
    """The tar stream inside ``archive`` when it is gzipped as :func:`pack_tree` gzips:
    :data:`GZIP_HEADER`, one member whose CRC and length check out, nothing after it.
    None otherwise, or when it expands past ``max_bytes``.

    The deflate bytes themselves are not compared: the same level gives other bytes with
    another zlib build (zlib-ng is some distributions' zlib), and the tar stream they
    inflate to is what identifies the content."""
    chunks: list[bytes] = []
    return b"".join(chunks) if _inflate(archive, max_bytes, chunks.append) else None


def gzipped_as_packed(archive: bytes) -> bool:
    """Whether ``archive`` is gzipped as :func:`pack_tree` gzips (see
    :func:`gunzip_packed`), whatever it holds; inflated a MiB at a time, nothing kept."""
    return _inflate(archive, None, lambda chunk: None)


def _inflate(archive: bytes, max_bytes: int | None, sink: Callable[[bytes], None]) -> bool:
    """Inflate ``archive`` a MiB at a time into ``sink``; whether it is gzipped as
    :func:`pack_tree` gzips and (with ``max_bytes``) inflates to no more than that."""
    if archive[:len(GZIP_HEADER)] != GZIP_HEADER:
        return False
    inflater = zlib.decompressobj(wbits=31)  # gzip framing, its CRC and length checked
    data, total = archive, 0
    try:
        while not inflater.eof:
            chunk = inflater.decompress(data, 1 << 20)
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                return False
            sink(chunk)
            if not chunk and len(inflater.unconsumed_tail) == len(data):
                return False  # no progress: the stream ends early
            data = inflater.unconsumed_tail
    except zlib.error:
        return False
    return not inflater.unused_data


@dataclass(frozen=True)
class ArchiveListing:
    files: list[FileEntry]
    """Regular files, in archive order."""
    dirs: dict[str, int]
    """Directory path -> mode."""
    problems: list[str]
    """Anything that breaks the format: links, devices, absolute or ``..`` paths, duplicates,
    unsorted entries, non-zero owners or mtimes."""


def list_archive(data: bytes, *, max_bytes: int = MAX_LISTED_BYTES) -> ArchiveListing:
    """Read an archive made by :func:`pack_task` into its manifest, checking the format."""
    files: list[FileEntry] = []
    dirs: dict[str, int] = {}
    problems: list[str] = []
    seen: set[str] = set()
    previous = ""
    total = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            name = member.name
            if name.startswith("/") or ".." in name.split("/") or name.startswith("./"):
                problems.append(f"{name}: absolute, '..' or './' path")
                continue
            if name in seen:
                problems.append(f"{name}: duplicate entry")
            if name < previous:
                problems.append(f"{name}: not in sorted order (after {previous})")
            seen.add(name)
            previous = name
            if member.uid or member.gid or member.uname or member.gname or member.mtime:
                problems.append(f"{name}: owner or mtime not zero")
            if member.isdir():
                dirs[name] = member.mode
                continue
            if not member.isreg():
                problems.append(f"{name}: not a regular file or directory")
                continue
            total += member.size
            if total > max_bytes:
                problems.append(f"archive expands past {max_bytes} bytes")
                break
            handle = tar.extractfile(member)
            content = handle.read() if handle is not None else b""
            files.append(FileEntry(path=name, size=len(content),
                                   sha256=hashlib.sha256(content).hexdigest(), mode=member.mode))
    return ArchiveListing(files=files, dirs=dirs, problems=problems)
