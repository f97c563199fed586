"""Health checks of this machine for TermGrade, each with its fix."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from termgrade.errors import EngineUnavailableError
from termgrade.settings import SETTINGS

MIN_FREE_GB = 10.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None


def check_engine() -> Check:
    from termgrade.sandbox.engine import ENGINE_FIX, docker_client

    try:
        info = docker_client().info()
    except EngineUnavailableError as exc:
        return Check("docker engine", False, str(exc).splitlines()[0], ENGINE_FIX)
    return Check("docker engine", True, f"{info.get('ServerVersion')} ({info.get('Driver')})")


def check_base_image() -> Check:
    from termgrade.sandbox.engine import image_exists

    try:
        present = image_exists(SETTINGS.base_image)
    except EngineUnavailableError:
        return Check("base image", False, "engine unavailable", "fix the engine first")
    if present:
        return Check("base image", True, SETTINGS.base_image)
    return Check("base image", False, f"{SETTINGS.base_image} missing",
                 "termgrade base-image build")


def check_disk(path: Path = Path("/var/lib/docker")) -> Check:
    target = path if path.exists() else Path("/")
    free_gb = shutil.disk_usage(target).free / 1e9
    ok = free_gb >= MIN_FREE_GB
    return Check("disk", ok, f"{free_gb:.1f} GB free at {target}",
                 None if ok else f"free at least {MIN_FREE_GB:.0f} GB (docker system prune)")


def run_checks() -> list[Check]:
    return [check_engine(), check_base_image(), check_disk()]
