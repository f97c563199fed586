"""Unattested tasks in training: `train prepare` leaves them out unless asked, and the RL
agent loop's rule refuses them unless the run included them (no verl needed here)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from termgrade.builders.bandcentral import build_bandcentral
from termgrade.cli import app
from termgrade.records import SplitRow
from termgrade.task import load_task
from termgrade.training.attested import loop_decision
from termgrade.training.prepare import prepare_run, read_record
from termgrade.training.recipe import GrpoRecipe
from tests.support.records import write_jsonl
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.filterwarnings("ignore:no selection report beside")

BASH_ONLY = ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
             "grep -qx hello /app/out.txt && echo 1 > /logs/verifier/reward.txt "
             "|| echo 0 > /logs/verifier/reward.txt\n")
SMALL = GrpoRecipe(train_batch_size=2, ppo_mini_batch_size=2, total_training_steps=1)


@pytest.fixture
def repo(make_task: MakeTask, tmp_path: Path) -> Path:
    """Three training tasks, one of them bash-only (unattested), and one validation task."""
    for name in ("alpha", "bravo", "charlie"):
        make_task(name)
    make_task("bash-only", test_sh=BASH_ONLY)
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        *(SplitRow(task_id=t, split="train3", pass_rate=0.5, role="train")
          for t in ("alpha", "bash-only", "bravo")),
        SplitRow(task_id="charlie", split="heldout1", pass_rate=0.5, role="validation")])
    out = tmp_path / "bandcentral"
    build_bandcentral(out, splits=splits, task_roots=[tmp_path / "tasks"],
                      include_unattested=True)
    return out


def _train_ids(run: Path) -> list[str]:
    rows = pq.read_table(run / "data" / "train.parquet").to_pylist()
    return [r["extra_info"]["task_id"] for r in rows]


def test_prepare_leaves_unattested_tasks_out_unless_included(repo: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = prepare_run(str(repo), run, recipe=SMALL)
    assert _train_ids(run) == ["alpha", "bravo"]
    assert [r["extra_info"]["index"] for r in
            pq.read_table(run / "data" / "train.parquet").to_pylist()] == [0, 1]
    assert not (run / "tasks" / "bash-only").exists()
    note = [w for w in done.record.warnings if "unattested" in w]
    assert note and note[0].startswith("left out 1 unattested task(s) from the run (bash-only)")
    assert done.record.splits["train"].task_ids == ["alpha", "bravo"]
    loops = yaml.safe_load((run / "agent_loop.yaml").read_text())
    assert loops[0]["include_unattested"] is False
    every = tmp_path / "run-all"
    done = prepare_run(str(repo), every, recipe=SMALL, include_unattested=True)
    assert _train_ids(every) == ["alpha", "bash-only", "bravo"]
    assert any(w.startswith("including 1 unattested task(s)") for w in done.record.warnings)
    assert yaml.safe_load((every / "agent_loop.yaml").read_text())[0]["include_unattested"]


def test_prepare_refuses_when_too_few_attested_tasks_are_left(repo: Path,
                                                              tmp_path: Path) -> None:
    from termgrade.core.errors import OptionError

    three = GrpoRecipe(train_batch_size=3, ppo_mini_batch_size=3, total_training_steps=1)
    with pytest.raises(OptionError, match="2 training task"):
        prepare_run(str(repo), tmp_path / "run", recipe=three)
    prepare_run(str(repo), tmp_path / "run-all", recipe=three, include_unattested=True)


def test_train_prepare_cli_says_what_it_left_out(repo: Path, tmp_path: Path) -> None:
    args = ["train", "prepare", "--repo", str(repo), "--batch-size", "2", "-o"]
    done = CliRunner().invoke(app, [*args, str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert "left out 1 unattested task(s) from the run (bash-only)" in text
    assert "--include-unattested" in text
    done = CliRunner().invoke(app, [*args, str(tmp_path / "run2"), "--include-unattested"])
    assert done.exit_code == 0, done.output
    assert "including 1 unattested task(s)" in " ".join(done.output.split())
    record = read_record(tmp_path / "run2" / "run.json")
    assert record.splits["train"].tasks == 3
    assert json.loads((tmp_path / "run2" / "run.json").read_text())["warnings"]


def test_the_agent_loop_refuses_an_unattested_task_unless_the_run_includes_it(
        make_task: MakeTask) -> None:
    bash = load_task(make_task("bash-only", test_sh=BASH_ONLY))
    refused = loop_decision(bash, include_unattested=False)
    assert not refused.attestable.attested and refused.refusal is not None
    assert "unattested task bash-only left out" in refused.refusal
    assert "--include-unattested" in refused.refusal
    allowed = loop_decision(bash, include_unattested=True)
    assert allowed.refusal is None and not allowed.attestable.attested
    plain = loop_decision(load_task(make_task("plain")), include_unattested=False)
    assert plain.refusal is None and plain.attestable.attested
