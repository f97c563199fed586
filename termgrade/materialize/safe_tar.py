"""The safe unpacker of a task ``archive`` (untrusted bytes from a dataset row).

It writes only regular files and directories, only below the directory it is given, and
refuses with :class:`~termgrade.materialize.errors.UnsafeArchiveError` (before or while writing; the
caller throws the partial tree away) on:

- absolute paths, ``..`` / ``.`` / empty components, backslashes, NUL, duplicate paths;
- symlinks, hard links, character / block devices, FIFOs and any other member type;
- setuid / setgid / sticky bits;
- bombs: more than ``max_members`` entries, more than ``max_bytes`` expanded (counted on
  the decompressed stream, so tar and PAX headers count too), one file over
  ``max_file_bytes``, or an expansion ratio over ``max_ratio`` once past ``ratio_floor``.

Files are created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` in a directory that holds
nothing but what this function made, and every target path is checked to resolve inside
the root. Directory modes are applied last, deepest first, so a read-only directory
cannot block its own contents.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from termgrade.materialize.errors import UnsafeArchiveError


@dataclass(frozen=True)
class ArchiveLimits:
    max_members: int = 20_000
    max_bytes: int = 1024**3
    max_file_bytes: int = 512 * 1024**2
    max_ratio: float = 200.0
    ratio_floor: int = 16 * 1024**2
    """The ratio check starts once this many bytes have been expanded."""


class _CountingReader(io.RawIOBase):
    """The decompressed stream, refusing to yield more than the limits allow."""

    def __init__(self, data: bytes, limits: ArchiveLimits) -> None:
        self._gz = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
        self._compressed = max(len(data), 1)
        self._limits = limits
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            chunk = self._gz.read(len(buffer))
        except (OSError, EOFError) as exc:
            raise UnsafeArchiveError(f"archive is not a valid gzip stream: {exc}") from exc
        self.total += len(chunk)
        limits = self._limits
        if self.total > limits.max_bytes + 1024 * 1024:
            raise UnsafeArchiveError(f"archive expands past {limits.max_bytes:,} bytes "
                                     "(an archive bomb)")
        if self.total > limits.ratio_floor and self.total / self._compressed > limits.max_ratio:
            raise UnsafeArchiveError(f"archive expands more than {limits.max_ratio:g}x "
                                     "its compressed size (an archive bomb)")
        buffer[:len(chunk)] = chunk
        return len(chunk)


def safe_member_path(name: str) -> PurePosixPath:
    """The member's relative path, or an error naming why it is unsafe."""
    if not name or "\0" in name or "\\" in name:
        raise UnsafeArchiveError(f"{name!r}: empty name, NUL or backslash in a member path")
    if name.startswith("/"):
        raise UnsafeArchiveError(f"{name!r}: absolute path in the archive")
    parts = name.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise UnsafeArchiveError(f"{name!r}: '..', '.' or empty path component")
    return PurePosixPath(*parts)


def _check_member(member: tarfile.TarInfo, seen: set[str], limits: ArchiveLimits) -> str:
    rel = safe_member_path(member.name).as_posix()
    plain = member.type in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE)
    if not plain:
        what = ("symlink" if member.issym() else "hard link" if member.islnk()
                else "device" if member.ischr() or member.isblk()
                else "fifo" if member.isfifo() else "sparse" if member.issparse()
                else f"type {member.type!r}")
        raise UnsafeArchiveError(f"{rel}: {what} entries are not allowed in a task archive")
    if member.mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX):
        raise UnsafeArchiveError(f"{rel}: setuid, setgid or sticky bit (mode {member.mode:o})")
    if rel in seen:
        raise UnsafeArchiveError(f"{rel}: duplicate path in the archive")
    seen.add(rel)
    if len(seen) > limits.max_members:
        raise UnsafeArchiveError(f"archive has more than {limits.max_members:,} entries")
    if member.size > limits.max_file_bytes:
        raise UnsafeArchiveError(f"{rel}: {member.size:,} bytes is over the per-file limit")
    return rel


def _inside(root: Path, rel: str) -> Path:
    target = root / rel
    if not target.resolve().is_relative_to(root.resolve()):
        raise UnsafeArchiveError(f"{rel}: resolves outside the target directory")
    return target


def _make_parents(root: Path, rel: str) -> None:
    current = root
    for part in PurePosixPath(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise UnsafeArchiveError(f"{rel}: a parent is not a directory")
        if not current.exists():
            current.mkdir(mode=0o755)


def extract_archive(data: bytes, root: Path, limits: ArchiveLimits | None = None) -> None:
    """Unpack the gzip'd tar ``data`` into the existing empty directory ``root``."""
    limits = limits or ArchiveLimits()
    root = Path(root)
    if any(root.iterdir()):
        raise UnsafeArchiveError(f"{root}: extraction target is not empty")
    seen: set[str] = set()
    dir_modes: dict[str, int] = {}
    reader = _CountingReader(data, limits)
    try:
        with tarfile.open(fileobj=io.BufferedReader(reader), mode="r|") as tar:
            for member in tar:
                rel = _check_member(member, seen, limits)
                target = _inside(root, rel)
                _make_parents(root, rel)
                if member.isdir():
                    if not target.is_dir():
                        target.mkdir(mode=0o755)
                    dir_modes[rel] = stat.S_IMODE(member.mode)
                    continue
                _write_file(tar, member, target, rel)
    except tarfile.TarError as exc:
        raise UnsafeArchiveError(f"archive is not a valid tar: {exc}") from exc
    for rel in sorted(dir_modes, key=lambda r: r.count("/"), reverse=True):
        os.chmod(root / rel, dir_modes[rel])


def _write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, rel: str) -> None:
    source = tar.extractfile(member)
    if source is None:
        raise UnsafeArchiveError(f"{rel}: unreadable member")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o600)
    with os.fdopen(fd, "wb") as out:
        written = 0
        while block := source.read(1 << 20):
            written += len(block)
            out.write(block)
        if written != member.size:
            raise UnsafeArchiveError(f"{rel}: truncated member ({written} of {member.size} bytes)")
        os.fchmod(out.fileno(), stat.S_IMODE(member.mode))
