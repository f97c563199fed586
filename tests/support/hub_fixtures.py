"""Pytest fixtures for Hub round trips against the stand-in Hub; import them into a test
module to use them.

``hf_home`` (autouse once imported) isolates the Hugging Face home, cache and token;
``hub`` runs a :class:`~tests.support.hub_server.HubServer` on loopback, points the
client at it, and fails the test if the client called an endpoint the server lacks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hf_env import isolate_hf
from tests.support.hub_server import HubServer


@pytest.fixture(autouse=True)
def hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hf_home"
    home.mkdir()
    isolate_hf(monkeypatch, home)
    return home


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hf_home: Path) -> Iterator[HubServer]:
    with HubServer(tmp_path / "hub_root") as server:
        isolate_hf(monkeypatch, hf_home, server.url)
        yield server
    if server.unhandled:
        pytest.fail(f"the client called endpoints the loopback Hub lacks: {server.unhandled}")
