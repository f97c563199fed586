"""The whole contract: build -> validate -> publish -> materialize, with the real builders,
the real validator (the publish call site's default) and the loopback Hub."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from termgrade.builders.environments import build_environments
from termgrade.materialize import materialize
from termgrade.publish import PublishOptions, RetryPolicy, publish
from termgrade.task.digest import task_manifest
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import HubServer

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")]
TASK = Path(__file__).resolve().parents[2] / "environments" / "word-frequency"


def test_built_repo_publishes_and_materializes_byte_identical(
        tmp_path: Path, hub: HubServer) -> None:  # noqa: F811
    shutil.copytree(TASK, tmp_path / "corpus" / TASK.name)
    out = tmp_path / "dist" / "environments"
    build_environments(out, task_roots=[tmp_path / "corpus"],
                       repo_id="org/termgrade-environments")  # the id it is published to
    opts = PublishOptions(repo_id="org/termgrade-environments", endpoint=hub.url,
                          token="hf_dummy", state_dir=tmp_path / "state", tag="v0.1",
                          retry=RetryPolicy(base_s=0.01))
    first = publish(out, opts)  # default validator: termgrade.validate.validate_repo
    assert first.created_repo and len(first.commits) == 1 and first.tagged == "v0.1"
    again = publish(out, opts)
    assert again.plan.empty and again.commits == []
    result = materialize("org/termgrade-environments", TASK.name, tmp_path / "wf",
                         endpoint=hub.url, revision="v0.1")
    assert task_manifest(result.path) == task_manifest(TASK)
    assert {p.relative_to(result.path) for p in result.path.rglob("*") if p.is_dir()} == {
        p.relative_to(TASK) for p in TASK.rglob("*") if p.is_dir()}
