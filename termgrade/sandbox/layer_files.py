"""Reading what a container's processes wrote, from its writable layer on the host.

The engine's archive read (``GET /containers/{id}/archive``) costs one API round trip and
a tar stream, ~40 ms here; the files a verifier writes under ``/logs/verifier`` are new
files, so they live in the container's upper directory, which the host reads directly.
The container's processes may still run and may have planted anything there: every
step is opened relative to its parent's descriptor without following symlinks
(``O_NOFOLLOW``); an entry is first opened ``O_PATH`` (opening a device or FIFO that way
has no effect) and only a regular file is then read, through that same descriptor, so
nothing can be swapped in between. Devices, FIFOs, sockets and symlinks are skipped, as
the engine's read skips them. Only what the layer holds is read: a file the image ships
at that path, never written in this container, is not the container's output.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import PurePosixPath

from termgrade.sandbox.errors import SandboxError

MAX_ENTRIES = 10_000
"""Entries (of any kind) a read walks before it refuses."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_GONE = {errno.ENOENT, errno.ENOTDIR, errno.ELOOP}


def read_layer_files(upper: str, path: PurePosixPath, *, max_bytes: int) -> dict[str, bytes]:
    """Relative path -> bytes of every regular file under container path ``path`` in the
    writable layer ``upper``. ``{}`` when the layer holds no directory there (or a
    symlink). SandboxError past ``max_bytes`` bytes or :data:`MAX_ENTRIES` entries."""
    try:
        top = os.open(upper, _DIR_FLAGS)
    except OSError as exc:
        raise SandboxError(f"the writable layer {upper} is unreadable: {exc}") from exc
    try:
        fd = top
        for part in path.relative_to("/").parts:
            try:
                step = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in _GONE:
                    return {}
                raise SandboxError(f"{path}: {exc}") from exc
            if fd != top:
                os.close(fd)
            fd = step
        reader = _Reader(path, max_bytes)
        reader.walk(fd, "")
        return reader.files
    finally:
        if fd != top:
            os.close(fd)
        os.close(top)


class _Reader:
    def __init__(self, path: PurePosixPath, max_bytes: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.files: dict[str, bytes] = {}
        self.size = 0
        self.entries = 0

    def walk(self, dir_fd: int, prefix: str) -> None:
        for name in sorted(os.listdir(dir_fd)):
            self.entries += 1
            if self.entries > MAX_ENTRIES:
                raise SandboxError(f"{self.path} holds more than {MAX_ENTRIES} entries")
            try:
                fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            except FileNotFoundError:  # removed while we walk
                continue
            try:
                info = os.fstat(fd)
                if stat.S_ISDIR(info.st_mode):
                    sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                    try:
                        if os.fstat(sub).st_ino == info.st_ino:
                            self.walk(sub, f"{prefix}{name}/")
                    finally:
                        os.close(sub)
                elif stat.S_ISREG(info.st_mode):
                    self._read(fd, f"{prefix}{name}", info.st_size)
            finally:
                os.close(fd)

    def _read(self, path_fd: int, relative: str, size: int) -> None:
        if self.size + size > self.max_bytes:
            raise SandboxError(f"{self.path} holds more than {self.max_bytes} bytes")
        # reopened through the O_PATH descriptor: the same inode, whatever the name holds now
        fd = os.open(f"/proc/self/fd/{path_fd}", os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        try:
            data = bytearray()
            while len(data) <= self.max_bytes - self.size:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
        self.size += len(data)
        if self.size > self.max_bytes:  # grew while read
            raise SandboxError(f"{self.path} holds more than {self.max_bytes} bytes")
        self.files[relative] = bytes(data)
