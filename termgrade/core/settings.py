"""Environment variables, read once, under the ``TERMGRADE_`` prefix."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    base_image: str = "termgrade/base:local"
    """Tag of the shared image every task Dockerfile starts FROM."""
    os_image: str = "termgrade/debian:bookworm"
    """Tag of the Debian OS image the base image starts FROM."""
    state_dir: Path = Path(".termgrade")
    """Where journals and run outputs go by default."""
    debug: bool = False
    """Show tracebacks for known errors (TERMGRADE_DEBUG=1)."""
    progress: bool = True
    """Show rich progress bars (TERMGRADE_PROGRESS=0 turns them off)."""
    pull: bool = True
    """Pull a task's missing FROM image from its registry (TERMGRADE_PULL=0: never ask a
    registry; a missing image is then a ``build_failed`` at once)."""


def _flag(value: str | None, default: bool) -> bool:
    if value is None:
        return default
    return value.strip().lower() not in {"", "0", "false", "no", "off"}


def load_settings() -> Settings:
    env = os.environ
    return Settings(
        base_image=env.get("TERMGRADE_BASE_IMAGE", Settings.base_image),
        os_image=env.get("TERMGRADE_OS_IMAGE", Settings.os_image),
        state_dir=Path(env.get("TERMGRADE_STATE_DIR", str(Settings.state_dir))),
        debug=_flag(env.get("TERMGRADE_DEBUG"), False),
        progress=_flag(env.get("TERMGRADE_PROGRESS"), True),
        pull=_flag(env.get("TERMGRADE_PULL"), True),
    )


SETTINGS = load_settings()
