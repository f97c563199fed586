"""Test support: point ``huggingface_hub`` and ``datasets`` at a private home and the
loopback stand-in Hub.

Both libraries read ``HF_HOME``, ``HF_ENDPOINT`` and friends into module constants when
they are imported, so setting environment variables later is not enough: these helpers
set the variables *and* patch the constants of whichever of the two is already imported.
For a subprocess (a fresh import), :func:`subprocess_env` is all it takes.

Xet: ``huggingface_hub`` uploads LFS-mode files through Xet whenever ``hf_xet`` is
importable and ``HF_HUB_DISABLE_XET`` is not set (it does not ask the server first), and
downloads through Xet only when a response carries Xet headers (the loopback Hub never
sends them). So the loopback Hub needs ``HF_HUB_DISABLE_XET=1`` on the client to take the
LFS path; without it the upload hits an endpoint the server answers with 501.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def hf_variables(home: Path, endpoint: str | None = None) -> dict[str, str]:
    out = {
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HF_DATASETS_CACHE": str(home / "datasets"),
        "HF_TOKEN": "hf_dummy_token_for_tests",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_DISABLE_XET": "1",
    }
    if endpoint is not None:
        out["HF_ENDPOINT"] = endpoint
    return out


def subprocess_env(home: Path, endpoint: str | None = None) -> dict[str, str]:
    """``os.environ`` plus the variables for a child process (offline mode removed)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")}
    return env | hf_variables(home, endpoint)


def isolate_hf(monkeypatch: pytest.MonkeyPatch, home: Path, endpoint: str | None = None) -> None:
    """This process: a private HF home, a dummy token, no telemetry, no offline, no Xet."""
    for name, value in hf_variables(home, endpoint).items():
        monkeypatch.setenv(name, value)
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    hub = sys.modules.get("huggingface_hub.constants")
    if hub is not None:
        patches: dict[str, object] = {
            "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"),
            "HUGGINGFACE_HUB_CACHE": str(home / "hub"),
            "HF_TOKEN_PATH": str(home / "token"),
            "HF_STORED_TOKENS_PATH": str(home / "stored_tokens"),
            "HF_HUB_OFFLINE": False, "HF_HUB_DISABLE_TELEMETRY": True,
            "HF_HUB_DISABLE_XET": True, "AGENT_HARNESSES_PATH": str(home / "agents.json"),
        }
        if endpoint is not None:
            patches["ENDPOINT"] = endpoint
            patches["HUGGINGFACE_CO_URL_TEMPLATE"] = (
                endpoint + "/{repo_id}/resolve/{revision}/{filename}")
        for name, patched in patches.items():
            if hasattr(hub, name):
                monkeypatch.setattr(hub, name, patched)
    config = sys.modules.get("datasets.config")
    if config is not None:
        monkeypatch.setattr(config, "HF_DATASETS_CACHE", home / "datasets")
        monkeypatch.setattr(config, "HF_HUB_OFFLINE", False, raising=False)
        if endpoint is not None:
            monkeypatch.setattr(config, "HF_ENDPOINT", endpoint)
            monkeypatch.setattr(config, "HUB_DATASETS_URL",
                                endpoint + "/datasets/{repo_id}/resolve/{revision}/{path}")
