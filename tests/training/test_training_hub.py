"""`train prepare --repo ORG/NAME`: the bandcentral repo read from the Hub (the loopback
stand-in Hub of tests/support, the real huggingface_hub client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from termgrade.builders.bandcentral import build_bandcentral
from termgrade.publish import PublishOptions, RetryPolicy, ValidationOutcome, publish
from termgrade.records import SplitRow
from termgrade.training.prepare import prepare_run
from termgrade.training.recipe import GrpoRecipe
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import HubServer
from tests.support.records import write_jsonl
from tests.support.task_dirs import MakeTask


@pytest.mark.filterwarnings("ignore:no selection report beside")
def test_prepare_from_a_hub_repo(verl: Any, make_task: MakeTask, tmp_path: Path,
                                 hub: HubServer) -> None:  # noqa: F811
    for name in ("alpha", "charlie"):
        make_task(name)
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        SplitRow(task_id="alpha", split="train151", pass_rate=0.5),
        SplitRow(task_id="charlie", split="heldout120", pass_rate=0.75)])
    staged = tmp_path / "bandcentral"
    build_bandcentral(staged, splits=splits, task_roots=[tmp_path / "tasks"],
                      repo_id="org/bandcentral")  # the id it is published to
    publish(staged, PublishOptions(repo_id="org/bandcentral", endpoint=hub.url,
                                   token="hf_dummy", state_dir=tmp_path / "state",
                                   retry=RetryPolicy(base_s=0.01)),
            validator=lambda root: ValidationOutcome(True))
    one = GrpoRecipe(train_batch_size=1, ppo_mini_batch_size=1, total_training_steps=1)
    done = prepare_run("org/bandcentral", tmp_path / "run", recipe=one)
    assert done.record.source == "org/bandcentral"
    assert done.record.splits["train"].task_ids == ["alpha"]
    rows = pq.read_table(tmp_path / "run" / "data" / "validation.parquet").to_pylist()
    assert rows[0]["extra_info"]["task_id"] == "charlie"
    assert (tmp_path / "run" / "tasks" / "charlie" / "tests" / "test_outputs.py").is_file()


def test_prepare_from_a_repo_the_hub_lacks_names_it_and_the_fix(
        tmp_path: Path, hub: HubServer) -> None:  # noqa: F811
    """The Hub's 404 becomes one message naming the repo, the Hub asked and what to do."""
    from typer.testing import CliRunner

    from termgrade.cli import app

    result = CliRunner().invoke(app, ["train", "prepare", "--repo", "me/missing",
                                      "-o", str(tmp_path / "run")])
    said = " ".join(result.output.split())
    assert result.exit_code == 1, said
    assert f"--repo me/missing: the Hub at {hub.url} has no dataset repo me/missing" in said
    assert "check the id" in said and "pass the staged directory" in said
    assert "Traceback" not in said and "Client Error" not in said
    assert not (tmp_path / "run").exists()
