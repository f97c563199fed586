"""The Docker engine: one shared client, and offline image builds."""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termgrade.errors import EngineUnavailableError, ImageBuildError

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

    Raises ImageBuildError with the last lines of the build log.
    """
    from docker.errors import APIError, DockerException

    client = docker_client()
    log: deque[str] = deque(maxlen=40)
    result: dict[str, Any] = {}
    started = time.monotonic()

    def _run() -> None:
        try:
            stream = client.api.build(
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

    worker = threading.Thread(target=_run, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise ImageBuildError(tag, "\n".join(log), fix=f"the build ran past {timeout_s:.0f} s; "
                              "raise [environment] build_timeout_sec or slim the Dockerfile")
    if "error" in result:
        log.append(str(result["error"]).strip())
        raise ImageBuildError(tag, "\n".join(log), fix=fix)
    image = client.images.get(tag)
    return BuiltImage(tag=tag, image_id=str(image.id), duration_s=time.monotonic() - started)
