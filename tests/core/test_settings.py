"""The settings read the environment when they are used, not when TermGrade is imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.core.errors import OptionError
from termgrade.core.settings import SETTINGS


def test_a_variable_set_after_import_takes_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERMGRADE_BASE_IMAGE", "example/base:1")
    monkeypatch.setenv("TERMGRADE_PULL", "0")
    monkeypatch.setenv("TERMGRADE_WORKERS", "3")
    assert (SETTINGS.base_image, SETTINGS.pull, SETTINGS.workers) == ("example/base:1", False, 3)
    monkeypatch.delenv("TERMGRADE_BASE_IMAGE")
    monkeypatch.setenv("TERMGRADE_WORKERS", "many")
    assert (SETTINGS.base_image, SETTINGS.workers) == ("termgrade/base:local", None)


def test_the_ray_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERMGRADE_RAY_ENV", " TG_SET , TG_UNSET,")
    monkeypatch.setenv("TG_SET", "value")
    monkeypatch.delenv("TG_UNSET", raising=False)
    monkeypatch.setenv("TERMGRADE_RAY_SHIP_CODE", "auto")
    monkeypatch.setenv("TERMGRADE_RAY_NUM_CPUS", "0.5")
    assert SETTINGS.ray_env == {"TG_SET": "value"}
    assert SETTINGS.ray_ship_code is None and SETTINGS.ray_num_cpus == 0.5
    monkeypatch.setenv("TERMGRADE_RAY_NUM_CPUS", "two")
    with pytest.raises(OptionError, match="TERMGRADE_RAY_NUM_CPUS='two' is not a number"):
        _ = SETTINGS.ray_num_cpus


def test_the_ca_bundle_is_the_first_variable_naming_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = tmp_path / "ca.crt"
    bundle.write_text("x")
    monkeypatch.setenv("PIP_CERT", str(tmp_path / "missing.crt"))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
    assert SETTINGS.ca_bundle == bundle
    monkeypatch.setenv("TERMGRADE_RUN_DIR", str(tmp_path))
    assert SETTINGS.run_dir == tmp_path
    monkeypatch.setenv("TG_KEY", "secret")
    assert SETTINGS.api_key("TG_KEY") == "secret" and SETTINGS.api_key(None) == ""
    assert "secret" not in repr(SETTINGS)
