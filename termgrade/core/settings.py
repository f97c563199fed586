"""Every environment variable TermGrade reads, in one place.

:data:`SETTINGS` has one documented property per setting. Each reads the environment when
it is asked, not when TermGrade is imported: a variable set later (by a test, a launcher,
``os.environ`` in a notebook) takes effect. Nothing else in TermGrade reads
``os.environ``; code that *passes* an environment to a child process or to Ray builds it
there, and the code run inside containers (``termgrade/scoring/incontainer/``) reads
its own.
"""

from __future__ import annotations

import os
from pathlib import Path

from termgrade.core.errors import OptionError

BASE_IMAGE = "termgrade/base:local"
OS_IMAGE = "termgrade/debian:bookworm"
STATE_DIR = Path(".termgrade")
RUN_DIR_VAR = "TERMGRADE_RUN_DIR"
"""Exported by a training run's launch.sh: the agent loop resolves the rows' relative task
paths against it."""
CA_BUNDLE_VARS = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


def _flag(value: str | None, default: bool) -> bool:
    if value is None:
        return default
    return value.strip().lower() not in {"", "0", "false", "no", "off"}


class Settings:
    """TermGrade's settings, each read from the environment at the moment it is used."""

    @property
    def base_image(self) -> str:
        """Tag of the shared image every task Dockerfile starts FROM
        (``TERMGRADE_BASE_IMAGE``, default ``termgrade/base:local``)."""
        return os.environ.get("TERMGRADE_BASE_IMAGE", BASE_IMAGE)

    @property
    def os_image(self) -> str:
        """Tag of the Debian OS image the base image starts FROM (``TERMGRADE_OS_IMAGE``,
        default ``termgrade/debian:bookworm``)."""
        return os.environ.get("TERMGRADE_OS_IMAGE", OS_IMAGE)

    @property
    def state_dir(self) -> Path:
        """Where journals and run outputs go by default (``TERMGRADE_STATE_DIR``, default
        ``.termgrade``)."""
        return Path(os.environ.get("TERMGRADE_STATE_DIR", str(STATE_DIR)))

    @property
    def reference_dir(self) -> Path:
        """Where each task's reference run is recorded, by task digest, whatever the
        working directory (``TERMGRADE_REFERENCE_DIR``, default the user's cache:
        ``$XDG_CACHE_HOME/termgrade/references``, ``~/.cache/termgrade/references`` when
        ``XDG_CACHE_HOME`` is unset or not absolute)."""
        override = os.environ.get("TERMGRADE_REFERENCE_DIR")
        if override:
            return Path(override)
        cache = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(cache) if cache and Path(cache).is_absolute() else Path.home() / ".cache"
        return base / "termgrade" / "references"

    @property
    def legacy_reference_dirs(self) -> tuple[Path, ...]:
        """Where earlier TermGrade versions recorded reference runs, still read (never
        written) so that no recorded run is lost: ``<state dir>/references``. None when
        ``TERMGRADE_REFERENCE_DIR`` names the one place to use."""
        if os.environ.get("TERMGRADE_REFERENCE_DIR"):
            return ()
        return (self.state_dir / "references",)

    @property
    def debug(self) -> bool:
        """Show tracebacks for known errors (``TERMGRADE_DEBUG=1``)."""
        return _flag(os.environ.get("TERMGRADE_DEBUG"), False)

    @property
    def progress(self) -> bool:
        """Show rich progress bars (``TERMGRADE_PROGRESS=0`` turns them off)."""
        return _flag(os.environ.get("TERMGRADE_PROGRESS"), True)

    @property
    def pull(self) -> bool:
        """Pull a task's missing FROM image from its registry (``TERMGRADE_PULL=0``: never
        ask a registry; a missing image is then a ``build_failed`` at once)."""
        return _flag(os.environ.get("TERMGRADE_PULL"), True)

    @property
    def workers(self) -> int | None:
        """Worker processes of the CPU-bound pools (``TERMGRADE_WORKERS``; ``1``: all in
        this process). None when unset or not a number: one per core."""
        value = os.environ.get("TERMGRADE_WORKERS", "").strip()
        return max(1, int(value)) if value.isdigit() else None

    @property
    def run_dir(self) -> Path | None:
        """The training run's directory (``TERMGRADE_RUN_DIR``, exported by launch.sh):
        relative ``task_dir`` of prompt rows are under it. None when unset or empty."""
        value = os.environ.get(RUN_DIR_VAR)
        return Path(value) if value else None

    @property
    def ca_bundle(self) -> Path | None:
        """The CA bundle this machine's HTTPS goes through, copied into the base image: the
        first of ``PIP_CERT``, ``REQUESTS_CA_BUNDLE``, ``SSL_CERT_FILE`` that names a file."""
        for var in CA_BUNDLE_VARS:
            value = os.environ.get(var)
            if value and Path(value).is_file():
                return Path(value)
        return None

    @property
    def ray_num_cpus(self) -> float | None:
        """Ray CPUs per trial (``TERMGRADE_RAY_NUM_CPUS``); None when unset or blank.
        Raises :class:`OptionError` when it is not a number."""
        name = "TERMGRADE_RAY_NUM_CPUS"
        value = os.environ.get(name)
        if value is None or not value.strip():
            return None
        try:
            return float(value)
        except ValueError:
            raise OptionError(f"{name}={value!r} is not a number") from None

    @property
    def ray_env(self) -> dict[str, str]:
        """The driver's variables to set on the Ray nodes: those ``TERMGRADE_RAY_ENV``
        names (comma-separated, e.g. ``OPENAI_API_KEY``) that are set here, with their
        values."""
        names = (n.strip() for n in os.environ.get("TERMGRADE_RAY_ENV", "").split(","))
        return {name: os.environ[name] for name in names if name and name in os.environ}

    @property
    def ray_ship_code(self) -> bool | None:
        """Send this driver's code to the Ray nodes (``TERMGRADE_RAY_SHIP_CODE``): ``1``
        always, ``0`` never; None (unset or ``auto``): when a node lacks it."""
        value = os.environ.get("TERMGRADE_RAY_SHIP_CODE", "").strip().lower()
        if value in {"", "auto"}:
            return None
        return value not in {"0", "false", "no", "off"}

    def api_key(self, variable: str | None) -> str:
        """The API key in the environment variable an endpoint names (``--api-key-env``);
        empty when none is named or it is unset. Read on each request and kept nowhere."""
        return os.environ.get(variable, "") if variable else ""

    def __repr__(self) -> str:
        return "Settings(read from the environment when used)"


SETTINGS = Settings()
"""The settings; each property reads the environment when it is used."""
