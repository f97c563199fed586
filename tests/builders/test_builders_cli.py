"""The build and validate commands, once each through the CLI runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from termgrade.cli.app import app
from tests.support.records import trial, write_trials
from tests.support.task_dirs import MakeTask

runner = CliRunner()


def test_build_environments_then_validate(make_task: MakeTask, tmp_path: Path) -> None:
    tasks = make_task("alpha").parent
    out = tmp_path / "dist" / "env"
    done = runner.invoke(app, ["build", "environments", "-o", str(out), "--tasks", str(tasks)])
    assert done.exit_code == 0, done.output
    assert "1 task(s) (unseen 1)" in done.output
    done = runner.invoke(app, ["validate", str(out), "--no-load", "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)  # --json: stdout holds the JSON alone
    assert report["ok"] is True and "archive" in report["passed"]
    assert f"{out}: valid" in done.stderr.replace("\n", "")
    (out / "tasks" / "alpha" / "instruction.md").write_text("changed\n")
    done = runner.invoke(app, ["validate", str(out), "--no-load", "--no-secrets"])
    assert done.exit_code == 1
    # The report is the command's result: stdout; stderr holds only progress and logs.
    assert "FAIL archive: tasks/alpha: differs from the manifest" in done.stdout
    assert f"{out}: 1 finding(s)" in done.stdout
    assert "FAIL" not in done.stderr and "finding(s)" not in done.stderr


def test_build_trajectories_error_exits_1_naming_the_record(make_task: MakeTask,
                                                            tmp_path: Path) -> None:
    tasks = make_task("alpha").parent
    orphan = trial(0, task_id="zulu", messages=False)
    orphan.episode = None  # no transcript to take the instruction from either
    trials = write_trials(tmp_path / "t.jsonl", [orphan])
    out = tmp_path / "dist" / "traj"
    done = runner.invoke(app, ["build", "trajectories", "-o", str(out), "--trials", str(trials),
                               "--tasks", str(tasks)])
    assert done.exit_code == 1
    assert "t.jsonl:1 (trial zulu__0): trial of unknown task 'zulu'" in done.output
    assert not out.exists()


def test_build_bandcentral_and_checkpoint_card(make_task: MakeTask, tmp_path: Path) -> None:
    make_task("bravo")
    tasks = make_task("alpha").parent
    splits = tmp_path / "splits.jsonl"
    splits.write_text('{"task_id": "alpha", "split": "train151", "pass_rate": 0.5}\n')
    done = runner.invoke(app, ["build", "bandcentral", "-o", str(tmp_path / "bc"), "--splits",
                               str(splits), "--tasks", str(tasks)])
    assert done.exit_code == 1  # no validation task: refused, naming the fix
    assert "selected for validation" in done.output and "--val-n" in done.output
    with splits.open("a") as handle:
        handle.write('{"task_id": "bravo", "split": "heldout120", "pass_rate": 0.5}\n')
    done = runner.invoke(app, ["build", "bandcentral", "-o", str(tmp_path / "bc"), "--splits",
                               str(splits), "--tasks", str(tasks)])
    assert done.exit_code == 0, done.output
    assert "train 1" in done.output
    done = runner.invoke(app, ["build", "checkpoint-card", "-o", str(tmp_path / "model")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "model" / "training_config.yaml").is_file()
