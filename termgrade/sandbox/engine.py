"""The Docker engine: one shared client, and offline image builds."""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termgrade.sandbox.errors import EngineUnavailableError, ImageBuildError

ENGINE_FIX = (
    "run scripts/ensure_docker.sh (root on Debian installs and starts one), or start Docker"
)


@functools.lru_cache(maxsize=1)
def docker_client() -> Any:
    """The process-wide Docker client (lazy import: ``--help`` never loads docker)."""
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env(max_pool_size=64, timeout=300)
        client.ping()
    except DockerException as exc:
        raise EngineUnavailableError(f"no Docker engine answers: {exc}", fix=ENGINE_FIX) from exc
    return client


def image_exists(tag: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        docker_client().images.get(tag)
    except ImageNotFound:
        return False
    return True


def remove_image(tag: str, *, wait_s: float = 30.0) -> bool:
    """Untag ``tag`` (its layers go when nothing else uses them); False when it was absent
    or is still in use after ``wait_s`` (containers just closed are removed in the
    background: a conflict is retried until then). Never raises for that: a leftover
    image is only disk."""
    from docker.errors import APIError, DockerException, ImageNotFound

    deadline = time.monotonic() + wait_s
    while True:
        try:
            docker_client().images.remove(tag, noprune=False)
        except ImageNotFound:
            return False
        except APIError as exc:
            if exc.status_code == 409 and time.monotonic() < deadline:
                time.sleep(0.25)  # a container of the image is still being removed
                continue
            return False
        except DockerException:
            return False
        return True


class _Build:
    """One build's HTTP stream, so that another thread can hang up on it: the engine then
    cancels the build (and ``forcerm`` removes its container)."""

    def __init__(self) -> None:
        self.response: Any = None
        self.aborted = False

    def api(self) -> Any:
        """A client of its own whose build stream this object can reach."""
        import docker
        from docker.utils import kwargs_from_env

        shared = docker_client().api
        api = docker.APIClient(version=shared.api_version, timeout=shared.timeout,
                               **kwargs_from_env())
        stream_helper = api._stream_helper  # docker-py reads the build's reply through it

        def keep(response: Any, decode: bool = False) -> Any:
            if self.response is None:
                self.response = response
            return stream_helper(response, decode=decode)

        api._stream_helper = keep
        return api

    def abort(self) -> None:
        self.aborted = True
        response = self.response
        if response is None:
            return
        with contextlib.suppress(Exception):  # private chain: best effort, then close
            response.raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            response.close()


_BUILDS: set[_Build] = set()
_BUILDS_LOCK = threading.Lock()


def abort_builds() -> int:
    """Hang up on every build this process has in flight (a run interrupted by Ctrl-C
    must not wait for them); returns how many."""
    with _BUILDS_LOCK:
        builds = list(_BUILDS)
    for build in builds:
        build.abort()
    return len(builds)


@dataclass(frozen=True)
class BuiltImage:
    tag: str
    image_id: str
    duration_s: float


def build_image(
    context: Path,
    tag: str,
    *,
    network: bool = False,
    timeout_s: float = 600.0,
    buildargs: dict[str, str] | None = None,
    fix: str | None = None,
) -> BuiltImage:
    """Build ``context/Dockerfile`` as ``tag``; offline (``network_mode=none``) by default.

    Raises ImageBuildError with the last lines of the build log. Interrupted (Ctrl-C) or
    past ``timeout_s``, it hangs up on the engine, which cancels the build.
    """
    from docker.errors import APIError, DockerException

    client = docker_client()
    log: deque[str] = deque(maxlen=40)
    result: dict[str, Any] = {}
    started = time.monotonic()
    build = _Build()
    api = build.api()

    def _run() -> None:
        try:
            stream = api.build(
                path=str(context),
                tag=tag,
                network_mode="host" if network else "none",
                rm=True,
                forcerm=True,
                decode=True,
                buildargs=buildargs or {},
            )
            for chunk in stream:
                if "stream" in chunk:
                    log.extend(line for line in chunk["stream"].splitlines() if line.strip())
                if "error" in chunk:
                    result["error"] = chunk["error"]
                aux = chunk.get("aux")
                if isinstance(aux, dict) and "ID" in aux:
                    result["id"] = aux["ID"]
        except (APIError, DockerException) as exc:
            result["error"] = str(exc)
        except Exception as exc:  # the stream hung up on (an aborted build)
            result["error"] = f"{type(exc).__name__}: {exc}"

    worker = threading.Thread(target=_run, daemon=True)
    with _BUILDS_LOCK:
        _BUILDS.add(build)
    try:
        worker.start()
        worker.join(timeout_s)
        if worker.is_alive():
            build.abort()
            raise ImageBuildError(tag, "\n".join(log), fix=f"the build ran past "
                                  f"{timeout_s:.0f} s; raise [environment] build_timeout_sec "
                                  "or slim the Dockerfile")
    except BaseException:
        build.abort()  # Ctrl-C: the engine cancels the build
        raise
    finally:
        with _BUILDS_LOCK:
            _BUILDS.discard(build)
        with contextlib.suppress(Exception):
            api.close()
    if build.aborted:
        raise ImageBuildError(tag, "\n".join(log), fix="the build was stopped (the run was "
                              "interrupted); run the command again")
    if "error" in result:
        log.append(str(result["error"]).strip())
        raise ImageBuildError(tag, "\n".join(log), fix=fix)
    image = client.images.get(tag)
    return BuiltImage(tag=tag, image_id=str(image.id), duration_s=time.monotonic() - started)
