"""Health checks of this machine for TermGrade, each with its fix.

A check fails (the command exits 1) when TermGrade cannot work here or something is left
to clean: a container no live run owns is a failure (scripts and CI key on the exit
status), with ``doctor --reap`` as its fix; ``--reap`` that removes them all exits 0.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from termgrade.core.settings import SETTINGS
from termgrade.sandbox.errors import EngineUnavailableError

if TYPE_CHECKING:
    from termgrade.sandbox.leftovers import Leftover

MIN_FREE_GB = 10.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    warn: bool = False
    """Works, but something needs attention (``fix`` says what)."""


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


_SHOWN = 5


def _run(leftover: Leftover) -> str:
    """Whose run: its output folder and model where the container names them."""
    if leftover.folder:
        return f", run of {leftover.folder}, model {leftover.model or '?'}"
    return f", run {leftover.run}" if leftover.run else ""


def _names(leftovers: Sequence[Leftover]) -> str:
    shown = ", ".join(f"{c.name} ({c.status}{_run(c)})" for c in leftovers[:_SHOWN])
    return shown + (f" and {len(leftovers) - _SHOWN} more" if len(leftovers) > _SHOWN else "")


def check_leftovers(reaped: Sequence[Leftover] = ()) -> Check:
    """TermGrade containers that no live run owns (``reaped``: those just removed)."""
    from termgrade.sandbox.leftovers import find_leftovers

    try:
        found = find_leftovers()
    except EngineUnavailableError:
        return Check("leftover containers", False, "engine unavailable", "fix the engine first")
    gone = [c for c in found if c.reapable]
    unknown = [c for c in found if not c.reapable]
    parts = [f"removed {len(reaped)}: {_names(reaped)}"] if reaped else []
    if gone:
        parts.append(f"{len(gone)} container(s) whose run is gone: {_names(gone)}")
    if unknown:
        parts.append(f"{len(unknown)} of an owner this host cannot check (another host, or "
                     f"an older TermGrade): {_names(unknown)}")
    fixes = ["termgrade doctor --reap"] if gone else []
    if unknown:
        fixes.append("`docker rm -f NAME` each of the others once no run uses it")
    return Check("leftover containers", not found, "; ".join(parts) or "none",
                 "; ".join(fixes) or None)


def run_checks(*, reap: bool = False) -> list[Check]:
    """Every check; ``reap`` first removes the containers no live run owns."""
    reaped: list[Leftover] = []
    if reap:
        from termgrade.sandbox.leftovers import find_leftovers
        from termgrade.sandbox.leftovers import reap as remove

        with contextlib.suppress(EngineUnavailableError):  # the engine check says so
            reaped = remove(find_leftovers())
    return [check_engine(), check_base_image(), check_disk(), check_leftovers(reaped)]
