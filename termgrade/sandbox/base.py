"""The one small interface every execution environment implements.

A :class:`Sandbox` is one running container of one task image. Methods list what they
raise; infrastructure failures are :class:`~termgrade.sandbox.errors.SandboxError`, never a
task failure.
"""

from __future__ import annotations

import abc
import hashlib
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import IO

from termgrade.sandbox.channel import LineChannel
from termgrade.sandbox.errors import SandboxError


@dataclass(frozen=True)
class Limits:
    """Resource limits of one container (defaults apply where task.toml is silent)."""

    cpus: float = 1.0
    memory_mb: int = 2048
    pids: int = 512
    storage_mb: int = 4096
    """Bytes the container may add to its writable layer, in MiB."""
    output_bytes: int = 1 << 20
    """How much of a command's output is kept (head and tail, half each)."""


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    output: str
    """stdout and stderr interleaved, decoded as UTF-8 with replacement, capped."""
    duration_s: float
    timed_out: bool = False
    output_bytes: int = 0
    """Bytes the command printed in all, before capping."""

    @property
    def truncated(self) -> bool:
        return self.output_bytes > len(self.output.encode("utf-8", "replace"))


class ChangeKind(Enum):
    MODIFIED = "C"
    ADDED = "A"
    DELETED = "D"
    TYPE = "T"
    """Replaced by an entry of another type (a file by a directory, a directory by a link)."""


@dataclass(frozen=True)
class Change:
    """One path the running container changed relative to its image (``docker diff``)."""

    path: str
    kind: ChangeKind


@dataclass
class OutputCap:
    """Keeps the first and last ``limit // 2`` bytes of a stream, counting the rest."""

    limit: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        half = self.limit // 2
        room = half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > half:
                del self.tail[: len(self.tail) - half]

    def text(self) -> str:
        if self.total <= len(self.head) + len(self.tail):
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        skipped = self.total - len(self.head) - len(self.tail)
        marker = f"\n[... {skipped} bytes of output dropped by termgrade ...]\n".encode()
        return (bytes(self.head) + marker + bytes(self.tail)).decode("utf-8", "replace")


class Sandbox(abc.ABC):
    """A started container. Use as a context manager so it is always removed."""

    @abc.abstractmethod
    def exec(
        self,
        command: list[str],
        *,
        timeout_s: float,
        env: dict[str, str] | None = None,
        workdir: str | None = None,
        user: str = "0:0",
        stdin: bytes | None = None,
    ) -> ExecResult:
        """Run a command (as uid:gid 0:0 by default, never resolved through the container's
        own /etc/passwd); a timeout kills it and returns ``timed_out=True``. ``stdin``, when
        given, is written to the command's standard input, which is then closed.

        Raises SandboxError when the container itself is gone or unusable.
        """

    @abc.abstractmethod
    def copy_in(self, source: Path, target: PurePosixPath) -> None:
        """Copy a host file or directory's contents to ``target`` (created). SandboxError."""

    @abc.abstractmethod
    def read_file(self, path: PurePosixPath, *, max_bytes: int = 1 << 20) -> bytes | None:
        """A file's bytes read by the engine, not by tools inside; None if absent.

        Raises SandboxError when the file is larger than ``max_bytes`` or not a file.
        """

    @abc.abstractmethod
    def read_tree(self, path: PurePosixPath, *, max_bytes: int = 32 << 20) -> dict[str, bytes]:
        """Relative path -> bytes of every regular file under ``path``, read by the engine.

        Raises SandboxError past ``max_bytes``.
        """

    def list_files(self, path: PurePosixPath) -> dict[str, str]:
        """Relative path -> sha256 of every regular file under ``path``, read by the engine."""
        return {name: hashlib.sha256(data).hexdigest()
                for name, data in self.read_tree(path).items()}

    @abc.abstractmethod
    def changes(self) -> list[Change]:
        """Paths changed since the image, as the engine sees them. SandboxError."""

    @abc.abstractmethod
    def halt(self, *, kill: bool = False) -> None:
        """Freeze (or, with ``kill``, kill) every process in the container; never raises.

        Afterwards nothing inside can run or write; the filesystem stays readable.
        Killing also ends every command running in it.
        """

    @abc.abstractmethod
    def put_archive(self, archive: IO[bytes]) -> None:
        """Extract a tar stream at ``/`` inside the container, as the engine. SandboxError."""

    def begin(self) -> None:
        """Start a container that was created stopped (its writable layer still unmounted,
        so the host may fill it first). A started container is left as it is. SandboxError."""
        return None

    def engine_paths(self) -> tuple[str, ...]:
        """Paths the engine itself places in the container (mount points, its init)."""
        return ()

    def writable_layer(self) -> tuple[str, list[str]] | None:
        """(upper, lowers) directories of the container's overlay, readable on this host."""
        return None

    def host_writable(self) -> tuple[str, ...]:
        """Host paths outside the writable layer that the container's processes can write
        (its own ``/etc`` files): the disk limit counts them with the layer."""
        return ()

    def engine_files_changed(self) -> dict[str, bytes | None]:
        """The engine's per-container files (``/etc/hosts``, ``/etc/hostname``,
        ``/etc/resolv.conf``: bind mounts, outside the writable layer) that the
        container's processes changed: container path to content, None past
        :data:`~termgrade.sandbox.etc_files.MAX_ENGINE_FILE`."""
        return {}

    def write_engine_file(self, path: str, data: bytes) -> None:
        """Write ``data`` into the container's own copy of the engine file ``path`` (one of
        :data:`~termgrade.sandbox.etc_files.ENGINE_FILES`). SandboxError."""
        raise SandboxError(f"{type(self).__name__} has no engine files: cannot write {path}")

    @abc.abstractmethod
    def open_channel(self, *, prefix: bytes, end_marker: bytes) -> LineChannel:
        """Start reading what processes inside write to ``/proc/1/fd/1``. SandboxError."""

    @abc.abstractmethod
    def close(self) -> None:
        """Kill and remove the container; never raises."""

    def close_later(self) -> object:
        """Close without waiting where the implementation can; by default, now."""
        self.close()
        return None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
