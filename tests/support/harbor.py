"""Test support: the real Harbor CLI for the tests that run it, with its telemetry off.

Harbor comes from ``scripts/ensure_harbor.sh``: Harbor 0.26 in a Python >= 3.12 venv at
``.venv-harbor`` (installed from PyPI the first time, a few minutes; then a no-op), and
``docker compose`` v2. The session-scoped ``harbor`` fixture in ``tests/conftest.py`` calls
:func:`ensure_harbor` once per test session; every test that runs Harbor takes it.

Harbor 0.26 sends usage telemetry unless ``HARBOR_TELEMETRY=0``: every process started
through :class:`Harbor` gets it (:meth:`Harbor.env`), and ``ensure_harbor.sh`` makes it
the default of ``.venv-harbor`` itself.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENSURE_HARBOR = ROOT / "scripts" / "ensure_harbor.sh"
NO_TELEMETRY = {"HARBOR_TELEMETRY": "0"}
INSTALL_TIMEOUT_S = 1200


class HarborUnavailable(RuntimeError):
    """``scripts/ensure_harbor.sh`` failed; the message carries the tail of its stderr."""


def harbor_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """``os.environ`` plus ``extra``, with Harbor's telemetry off (``extra`` cannot undo it)."""
    return {**os.environ, **(extra or {}), **NO_TELEMETRY}


@dataclass(frozen=True)
class Harbor:
    executable: Path
    """``.venv-harbor/bin/harbor``."""

    @property
    def python(self) -> Path:
        """The interpreter of Harbor's venv (``import harbor`` works there)."""
        return self.executable.parent / "python"

    @staticmethod
    def env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return harbor_env(extra)

    def run(self, args: Sequence[str], *, cwd: Path, timeout: float,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``harbor ARGS`` in ``cwd``; the result is returned whatever the exit status."""
        return subprocess.run([str(self.executable), *args], cwd=cwd, env=self.env(env),
                              capture_output=True, text=True, timeout=timeout, check=False)

    def python_run(self, code: str, *args: str, cwd: Path,
                   timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``python -c CODE ARGS`` with Harbor's interpreter, in ``cwd``."""
        return subprocess.run([str(self.python), "-c", code, *args], cwd=cwd, env=self.env(),
                              capture_output=True, text=True, timeout=timeout, check=False)


def ensure_harbor(timeout_s: float = INSTALL_TIMEOUT_S) -> Harbor:
    """Install Harbor into ``.venv-harbor`` if needed (``scripts/ensure_harbor.sh``)."""
    done = subprocess.run(["bash", str(ENSURE_HARBOR)], capture_output=True, text=True,
                          timeout=timeout_s, check=False, env=harbor_env(), cwd=ROOT)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise HarborUnavailable(f"{ENSURE_HARBOR} exited {done.returncode}:\n"
                                f"{done.stderr[-3000:]}")
    executable = Path(lines[-1])
    if not executable.is_file():
        raise HarborUnavailable(f"{ENSURE_HARBOR} printed {executable}, which does not exist")
    return Harbor(executable)
