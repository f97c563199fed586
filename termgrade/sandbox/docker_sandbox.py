"""The Docker implementation of :class:`Sandbox`: no network, no privileges, limits on."""

from __future__ import annotations

import contextlib
import io
import socket
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import IO, Any, TypedDict, Unpack

from termgrade.sandbox.base import Change, ChangeKind, ExecResult, Limits, OutputCap, Sandbox
from termgrade.sandbox.channel import LineChannel
from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.errors import SandboxError
from termgrade.sandbox.etc_files import (
    changed_files,
    etc_mounts,
    forget,
    home_of,
    ipv6_sysctls,
    write_file,
)
from termgrade.sandbox.overlay_diff import overlay_changes, upper_and_lower
from termgrade.sandbox.ownership import container_labels, run_stopped
from termgrade.task.digest import IGNORED_NAMES  # host caches are never copied in

# What a root process in a task container keeps; everything else is dropped.
KEPT_CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID"]
_KIND = {0: ChangeKind.MODIFIED, 1: ChangeKind.ADDED, 2: ChangeKind.DELETED}
_ENGINE_QUOTA: list[bool] = [True]
"""Cleared once the engine refuses ``--storage-opt size`` (not overlay2 on xfs+pquota)."""
_REAPER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="termgrade-reaper")
"""Removes finished containers in the background; the interpreter waits for it at exit."""
DOCKER_INIT = ("/sbin/docker-init", "/usr/sbin/docker-init")
"""Where the engine mounts its init (``init=True``); with merged /usr it lands in the latter."""
TIMEOUT = "/usr/bin/timeout"
"""By absolute path: the grader never resolves its own tools through a PATH."""
KILL_GRACE_S = 5.0
"""Seconds between the in-container TERM and KILL, and the host-side backstop after it."""


class ContainerOptions(TypedDict, total=False):
    """How :meth:`DockerSandbox.start` and :meth:`DockerSandbox.create` make a container."""

    limits: Limits | None
    """CPU, memory, pids and disk (the defaults of :class:`Limits` when absent)."""
    env: dict[str, str] | None
    workdir: str | None
    label: str
    """Part of the container's name and its ownership label."""
    read_only: dict[str, str] | None
    """Container paths to host directories or files, bind-mounted read-only (root in the
    container cannot remount them: CAP_SYS_ADMIN is dropped)."""
    seccomp: str | None
    """A seccomp profile's JSON text, in place of the engine's default."""
    tmpfs: dict[str, int] | None
    """Container paths to fresh, writable in-memory filesystems of at most so many bytes
    (counted against the container's memory)."""
    command: list[str] | None
    """What the engine's init runs (``sleep infinity`` by PATH when absent). The scoring
    container passes an absolute path of the image's own, so its first process owes
    nothing to a file the agent put on a PATH."""


class DockerSandbox(Sandbox):
    def __init__(self, container: Any, limits: Limits, *, started: bool = True) -> None:
        self._container = container
        self._limits = limits
        self._started = started
        self.id: str = container.id
        self._layers: tuple[str, list[str]] | tuple[()] | None = None
        """overlay2 (upper, lowers) readable from here; () when the API must diff."""

    @classmethod
    def start(cls, image: str, **options: Unpack[ContainerOptions]) -> DockerSandbox:
        """Start ``sleep infinity`` (or ``command``) under the engine's init in a new
        container of ``image`` (:class:`ContainerOptions`)."""
        box = cls.create(image, **options)
        try:
            box.begin()
        except SandboxError:
            box.close()
            raise
        return box

    @classmethod
    def create(cls, image: str, **options: Unpack[ContainerOptions]) -> DockerSandbox:
        """A container as :meth:`start` makes it, created but not started: its writable
        layer is an unmounted directory the host may fill before :meth:`begin`."""
        from docker.errors import DockerException
        from docker.types import Mount

        if run_stopped():
            raise SandboxError(f"not starting a container of {image}: its run was "
                               "interrupted")
        limits = options.get("limits") or Limits()
        label = options.get("label", "")
        seccomp = options.get("seccomp")
        name = f"termgrade-{label or 'run'}-{uuid.uuid4().hex[:10]}"
        hostname = uuid.uuid4().hex[:12]
        mounts = [Mount(target, source, type="bind", read_only=True)
                  for target, source in (options.get("read_only") or {}).items()]
        try:
            etc = etc_mounts(name, hostname)
        except OSError as exc:
            forget(name)
            raise SandboxError(f"could not write the /etc files of {name}: {exc} (their "
                               "directory, termgrade/sandbox/etc_files.py's ROOT, must be "
                               "a writable directory on this host)") from exc
        mounts += [Mount(target, source, type="bind") for target, source in etc.items()]
        # exec: a test.sh may run /tests/run_tests.sh by its path, as Harbor lets it (the
        # engine's tmpfs is noexec by default); the files there are the tests' own.
        tmpfs = {target: f"size={size},mode=755,exec"
                 for target, size in (options.get("tmpfs") or {}).items()}
        quota = {"storage_opt": {"size": f"{limits.storage_mb}M"}} if _ENGINE_QUOTA else {}
        try:
            container = docker_client().containers.create(
                image,
                **quota,
                command=options.get("command") or ["sleep", "infinity"],
                name=name,
                hostname=hostname,
                detach=True,
                init=True,
                network_disabled=True,  # a new namespace, loopback only: see etc_files
                sysctls=ipv6_sysctls(),
                cap_drop=["ALL"],
                cap_add=KEPT_CAPABILITIES,
                # no no-new-privileges: sudo/crontab work for non-root users (docs/grading.md)
                security_opt=[f"seccomp={seccomp}"] if seccomp else [],
                nano_cpus=int(limits.cpus * 1e9),
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                pids_limit=limits.pids,
                environment=options.get("env") or {},
                working_dir=options.get("workdir"),
                labels=container_labels(label),
                log_config={"type": "none", "config": {}},
                mounts=mounts,
                tmpfs=tmpfs,
            )
        except DockerException as exc:
            forget(name)
            if quota and "storage-opt" in str(exc).lower():
                # overlay2 enforces a size only on xfs with pquota; the watchdog does it here.
                _ENGINE_QUOTA.clear()
                return cls.create(image, **options)
            raise SandboxError(f"could not create a container of {image}: {exc}") from exc
        return cls(container, limits, started=False)

    def begin(self) -> None:
        from docker.errors import DockerException

        if self._started:
            return
        try:
            self._container.start()
            self._started = True
        except DockerException as exc:
            raise SandboxError(f"could not start container {self.id[:12]}: {exc}") from exc

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
        from docker.errors import DockerException

        api = docker_client().api
        wrapped = [TIMEOUT, "-k", str(int(KILL_GRACE_S)), str(max(1, round(timeout_s))), *command]
        cap = OutputCap(self._limits.output_bytes)
        started = time.monotonic()
        try:
            exec_id = api.exec_create(self.id, wrapped, environment=env, workdir=workdir,
                                      user=user, stdin=stdin is not None)["Id"]
            if stdin is None:
                stream = api.exec_start(exec_id, stream=True, demux=False)
            else:
                stream = _with_stdin(api.exec_start(exec_id, socket=True), stdin)
        except (DockerException, OSError) as exc:
            raise SandboxError(f"exec in {self.id[:12]} failed: {exc}") from exc
        failure: list[BaseException] = []

        def _drain() -> None:
            try:
                for chunk in stream:
                    cap.feed(chunk)
            except Exception as exc:
                failure.append(exc)

        reader = threading.Thread(target=_drain, daemon=True)
        reader.start()
        reader.join(timeout_s + 2 * KILL_GRACE_S)
        if reader.is_alive():
            # The in-container timeout did not end it (a stopped `timeout`, a stuck pipe):
            # freeze everything inside; the caller decides what the container is worth.
            self.halt()
            return ExecResult(124, cap.text(), time.monotonic() - started, True, cap.total)
        duration = time.monotonic() - started
        if failure:
            raise SandboxError(f"reading output of exec in {self.id[:12]} failed: {failure[0]}")
        try:
            exit_code = api.exec_inspect(exec_id).get("ExitCode")
        except DockerException as exc:
            raise SandboxError(f"exec inspect in {self.id[:12]} failed: {exc}") from exc
        code = int(exit_code if exit_code is not None else -1)
        timed_out = code in (124, 137) and duration >= timeout_s - 1
        return ExecResult(code, cap.text(), duration, timed_out, cap.total)

    def copy_in(self, source: Path, target: PurePosixPath) -> None:
        from docker.errors import DockerException

        # One put_archive at "/" with every entry under target's path: no mkdir exec.
        prefix = PurePosixPath(*target.parts[1:]) if target.is_absolute() else target
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for parent in reversed(prefix.parents[:-1]):
                tar.addfile(_dir_entry(parent.as_posix()))
            tar.addfile(_dir_entry(prefix.as_posix()))
            paths = sorted(source.rglob("*")) if source.is_dir() else [source]
            paths = [p for p in paths if not IGNORED_NAMES.intersection(p.parts)]
            base = source if source.is_dir() else source.parent
            for path in paths:
                arcname = (prefix / path.relative_to(base).as_posix()).as_posix()
                tar.add(path, arcname=arcname, recursive=False, filter=_as_root)
        try:
            if not self._container.put_archive("/", buffer.getvalue()):
                raise SandboxError(f"copying {source} to {target} was refused")
        except DockerException as exc:
            raise SandboxError(f"copying {source} to {target} failed: {exc}") from exc

    def read_tree(self, path: PurePosixPath, *, max_bytes: int = 32 << 20) -> dict[str, bytes]:
        """Relative path -> bytes of every regular file under ``path``, in one engine read.

        Raises SandboxError when the tree is larger than ``max_bytes`` (read stops there).
        """
        from docker.errors import DockerException, NotFound

        try:
            chunks, _stat = self._container.get_archive(str(path))
            data = bytearray()
            for chunk in chunks:
                data += chunk
                if len(data) > max_bytes + (1 << 20):
                    raise SandboxError(f"{path} holds more than {max_bytes} bytes")
        except NotFound:
            return {}
        except DockerException as exc:
            raise SandboxError(f"reading {path} from {self.id[:12]} failed: {exc}") from exc
        found: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(bytes(data)), mode="r") as tar:
            for member in tar:
                if member.isfile():
                    handle = tar.extractfile(member)
                    relative = PurePosixPath(*PurePosixPath(member.name).parts[1:]).as_posix()
                    found[relative] = handle.read() if handle else b""
        return found

    def _archive(self, path: PurePosixPath) -> tarfile.TarFile | None:
        from docker.errors import DockerException, NotFound

        try:
            chunks, _stat = self._container.get_archive(str(path))
            data = b"".join(chunks)
        except NotFound:
            return None
        except DockerException as exc:
            raise SandboxError(f"reading {path} from {self.id[:12]} failed: {exc}") from exc
        return tarfile.open(fileobj=io.BytesIO(data), mode="r")

    def read_file(self, path: PurePosixPath, *, max_bytes: int = 1 << 20) -> bytes | None:
        tar = self._archive(path)
        if tar is None:
            return None
        with tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise SandboxError(f"{path} is not a regular file")
            if member.size > max_bytes:
                raise SandboxError(f"{path} is {member.size} bytes, over the {max_bytes} cap")
            handle = tar.extractfile(member)
            return handle.read() if handle else b""

    def changes(self) -> list[Change]:
        from docker.errors import DockerException

        try:
            layers = self.writable_layer()
            if layers:
                upper, lower = layers
                return overlay_changes(upper, lower)
            raw = self._container.diff() or []
        except (DockerException, OSError) as exc:
            raise SandboxError(f"docker diff of {self.id[:12]} failed: {exc}") from exc
        return [Change(item["Path"], _KIND[int(item["Kind"])]) for item in raw]

    def halt(self, *, kill: bool = False) -> None:
        from docker.errors import DockerException

        if not kill:
            try:
                self._container.pause()
                return
            except DockerException:
                pass  # not running (it exited or was killed): nothing runs inside
        with contextlib.suppress(DockerException):
            self._container.kill()
            self._container.wait(timeout=30)

    def put_archive(self, archive: IO[bytes]) -> None:
        from docker.errors import DockerException

        try:
            if not self._container.put_archive("/", archive):
                raise SandboxError(f"extracting an archive in {self.id[:12]} was refused")
        except DockerException as exc:
            raise SandboxError(f"extracting an archive in {self.id[:12]} failed: {exc}") from exc

    def writable_layer(self) -> tuple[str, list[str]] | None:
        from docker.errors import DockerException

        if self._layers is None:
            try:
                self._container.reload()
            except DockerException as exc:
                raise SandboxError(f"inspecting {self.id[:12]} failed: {exc}") from exc
            self._layers = upper_and_lower(self._container.attrs) or ()
        return self._layers or None

    def host_writable(self) -> tuple[str, ...]:
        return (str(home_of(str(self._container.name))),)

    def engine_files_changed(self) -> dict[str, bytes | None]:
        hostname = str((self._container.attrs.get("Config") or {}).get("Hostname") or "")
        return changed_files(str(self._container.name), hostname)

    def write_engine_file(self, path: str, data: bytes) -> None:
        try:
            write_file(str(self._container.name), path, data)
        except (OSError, ValueError) as exc:
            raise SandboxError(f"writing {path} of {self.id[:12]} failed: {exc}") from exc

    def engine_paths(self) -> tuple[str, ...]:
        self.writable_layer()  # loads the inspect data once
        mounts = self._container.attrs.get("Mounts") or []
        return (*DOCKER_INIT, *(str(m.get("Destination")) for m in mounts))

    def open_channel(self, *, prefix: bytes, end_marker: bytes) -> LineChannel:
        from docker.errors import DockerException

        try:
            chunks = self._container.attach(stdout=True, stderr=True, stream=True, logs=False)
        except DockerException as exc:
            raise SandboxError(f"attaching to {self.id[:12]} failed: {exc}") from exc
        return LineChannel(chunks, prefix=prefix, end_marker=end_marker)

    def close(self) -> None:
        from docker.errors import DockerException

        with contextlib.suppress(DockerException):
            self._container.remove(force=True)
        forget(str(self._container.name))

    def close_later(self) -> Future[None]:
        """Remove the container off the critical path (the run's result is already read)."""
        return _REAPER.submit(self.close)


def _with_stdin(sock: Any, data: bytes) -> Iterator[bytes]:
    """Write ``data`` to an exec's stdin over its hijacked socket, close that side, and
    yield what the command prints (stdout and stderr, unframed). The bytes pass through
    the engine's pipe only: nothing in the container's filesystem ever holds them."""
    from docker.utils.socket import frames_iter

    raw = getattr(sock, "_sock", sock)
    raw.sendall(data)
    with contextlib.suppress(OSError):
        raw.shutdown(socket.SHUT_WR)

    def _frames() -> Iterator[bytes]:
        try:
            for _stream, chunk in frames_iter(sock, tty=False):
                yield chunk
        finally:
            with contextlib.suppress(OSError):
                sock.close()

    return _frames()


def _dir_entry(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return _as_root(info)


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
