"""Carrying the agent's work, and nothing else, into a fresh scoring container.

The tar is built on the host from the agent container's writable layer (never through
a tool inside it) by the host's GNU tar, given the exact list of entries and no
recursion: regular files, directories and symlinks under the writable paths, with
their mode, numeric owner and mtime. Devices, FIFOs and sockets are not carried. GNU
long-name records keep any byte string the kernel accepted as a name.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tarfile
from tempfile import SpooledTemporaryFile, TemporaryFile
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


def carry_archive(upper_dir: str, entries: list[UpperEntry]) -> IO[bytes]:
    """A tar of ``entries`` (parents first) made by GNU tar from ``upper_dir``; rewound.

    Raises OSError when tar fails (a file vanished or the host is out of space).
    """
    spool: IO[bytes] = TemporaryFile()  # noqa: SIM115
    listing = b"\0".join(
        os.fsencode(e.path.lstrip("/")) for e in entries
        if stat.S_ISDIR(e.mode) or stat.S_ISREG(e.mode) or stat.S_ISLNK(e.mode))
    done = subprocess.run(
        ["tar", "--create", "--file=-", "--format=gnu", "--numeric-owner", "--no-recursion",
         f"--directory={upper_dir}", "--null", "--files-from=-"],
        input=listing, stdout=spool, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        spool.close()
        raise OSError(f"tar of the agent's work failed: {done.stderr.decode()[-500:]}")
    spool.seek(0)
    return spool


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
