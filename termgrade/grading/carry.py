"""Carrying the agent's work, and nothing else, into a fresh scoring container.

The tar is built on the host from the agent container's writable layer (never through
a tool inside it): regular files, directories and symlinks under the writable paths,
with their mode, owner and mtime. Devices, FIFOs and sockets are not carried. Names
are written in PAX form, so any byte string the kernel accepted round-trips.
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterable
from tempfile import SpooledTemporaryFile
from typing import IO

from termgrade.sandbox.overlay_diff import UpperEntry

SPOOL_BYTES = 64 << 20
"""Archives up to this size stay in memory; larger ones spill to a temporary file."""


def open_archive() -> tuple[IO[bytes], tarfile.TarFile]:
    # Returned open: the caller closes it once the engine has read it.
    spool: IO[bytes] = SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
    tar = tarfile.open(fileobj=spool, mode="w", format=tarfile.PAX_FORMAT,  # noqa: SIM115
                       encoding="utf-8", errors="surrogateescape")
    return spool, tar


def _info(entry: UpperEntry, info: os.stat_result) -> tarfile.TarInfo:
    member = tarfile.TarInfo(entry.path.lstrip("/"))
    member.mode = stat.S_IMODE(info.st_mode)
    member.uid, member.gid = info.st_uid, info.st_gid
    member.mtime = int(info.st_mtime)
    return member


def add_entries(tar: tarfile.TarFile, entries: Iterable[UpperEntry]) -> int:
    """Add ``entries`` (parents first) read from the host; returns the bytes of file data."""
    total = 0
    for entry in entries:
        info = os.lstat(entry.host_path)
        member = _info(entry, info)
        if stat.S_ISDIR(info.st_mode):
            member.type = tarfile.DIRTYPE
            tar.addfile(member)
        elif stat.S_ISLNK(info.st_mode):
            member.type = tarfile.SYMTYPE
            member.linkname = os.readlink(entry.host_path)
            tar.addfile(member)
        elif stat.S_ISREG(info.st_mode):
            fd = os.open(entry.host_path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                member.size = os.fstat(fd).st_size
                tar.addfile(member, handle)
            total += member.size
    return total


def add_bytes(tar: tarfile.TarFile, path: str, data: bytes, *, mode: int = 0o644) -> None:
    import io

    member = tarfile.TarInfo(path.lstrip("/"))
    member.size, member.mode = len(data), mode
    member.uid = member.gid = 0
    tar.addfile(member, io.BytesIO(data))


def add_dir(tar: tarfile.TarFile, path: str, *, mode: int = 0o755) -> None:
    member = tarfile.TarInfo(path.lstrip("/"))
    member.type, member.mode = tarfile.DIRTYPE, mode
    member.uid = member.gid = 0
    tar.addfile(member)
