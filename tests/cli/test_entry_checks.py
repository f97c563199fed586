"""Inputs are checked where they enter: each bad input is refused by the command the user
typed, with exit code 1 and one error naming the input and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from termgrade.cli import app
from termgrade.labels import DEFAULT_SCHEME
from termgrade.selection import SelectionConfig, select_band_central
from tests.support.staged_repo import pristine

__all__ = ["pristine"]
runner = CliRunner()


def said(result: object) -> str:
    """The command's output with the console's line wrapping undone."""
    return " ".join(str(getattr(result, "output", "")).split())


def _labels(path: Path, rates: dict[str, float], **extra: object) -> Path:
    rows = []
    for task, p in rates.items():
        rows.append({"task_id": task, "model": "base", "scaffold": "bash", "pass_rate": p,
                     "band": DEFAULT_SCHEME.band(p), "n_counted": 8, "k": 8,
                     "n_passed": round(p * 8), "schema_version": "1.0", **extra})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


EIGHTHS = {f"t{i:03d}": (i % 9) / 8 for i in range(90)}


def test_select_refuses_a_split_name_datasets_cannot_load(tmp_path: Path) -> None:
    done = runner.invoke(app, ["select", str(_labels(tmp_path / "l.jsonl", EIGHTHS)),
                               "--model", "base", "--split-names", "unseen,rl-train,val",
                               "-o", str(tmp_path / "s.jsonl"), "--no-plot"])
    assert done.exit_code == 1
    assert "split name 'rl-train'" in said(done) and "'rl_train'" in said(done)
    assert not (tmp_path / "s.jsonl").exists()


def test_select_refuses_validation_targets_outside_zero_one(tmp_path: Path) -> None:
    done = runner.invoke(app, ["select", str(_labels(tmp_path / "l.jsonl", EIGHTHS)),
                               "--model", "base", "--val-targets", "2,3",
                               "-o", str(tmp_path / "s.jsonl"), "--no-plot"])
    assert done.exit_code == 1
    assert "--val-targets 2,3: 2 is not a pass rate in [0, 1]" in said(done)
    assert "fix: e.g. --val-targets 0.25,0.75" in said(done)


def test_validation_is_never_a_task_at_zero_or_one() -> None:
    rates = {f"z{i}": 0.0 for i in range(20)} | {f"o{i}": 1.0 for i in range(20)} \
        | {f"m{i}": 0.5 for i in range(20)} | {"low": 0.25, "high": 0.875}
    frame = pd.DataFrame([{"task_id": t, "model": "base", "scaffold": "bash", "pass_rate": p,
                           "band": DEFAULT_SCHEME.band(p), "n_counted": 8, "k": 8,
                           "n_passed": round(p * 8)} for t, p in rates.items()])
    with pytest.warns(Warning):
        selection = select_band_central(frame, SelectionConfig("base", n=10, val_n=5))
    val = selection.chosen("validation")
    assert set(val["task_id"]) == {"low", "high"}
    assert (np.abs(val["pass_rate"] - val["val_target"]) <= 0.2).all()
    assert any("within 0.2 of 0.25" in str(i) for i in selection.issues)


def test_report_refuses_a_band_that_does_not_exist(tmp_path: Path) -> None:
    done = runner.invoke(app, ["report", str(_labels(tmp_path / "l.jsonl", EIGHTHS)),
                               "-o", str(tmp_path / "r"), "--band", "nope", "--no-plots"])
    assert done.exit_code == 1
    assert "--band 'nope': no such band (known: " in said(done) and "central" in said(done)
    assert not (tmp_path / "r" / "report.md").exists()


def test_labels_of_an_unknown_schema_version_are_refused_by_select(tmp_path: Path) -> None:
    path = _labels(tmp_path / "l.jsonl", {"t1": 0.5}, schema_version="9.9")
    done = runner.invoke(app, ["select", str(path), "--model", "base",
                               "-o", str(tmp_path / "s.jsonl"), "--no-plot"])
    assert done.exit_code == 1
    assert "l.jsonl:1" in said(done) and "'9.9'" in said(done) and "upgrade" in said(done)


def test_trials_of_an_unknown_schema_version_are_refused_by_labels(tmp_path: Path) -> None:
    row = {"trial_id": "t1__m__0", "task_id": "t1", "model": "m", "scaffold": "s",
           "attempt": 0, "reward": 1.0, "passed": True, "counted": True, "retry_index": 0,
           "source": "test", "schema_version": "9.9"}
    trials = tmp_path / "trials.jsonl"
    trials.write_text(json.dumps(row) + "\n")
    done = runner.invoke(app, ["labels", str(trials), "-o", str(tmp_path / "l.jsonl")])
    assert done.exit_code == 1
    assert "trials.jsonl:1" in said(done) and "'9.9'" in said(done) and "fix:" in said(done)
    assert not (tmp_path / "l.jsonl").exists()


def test_materialize_keeps_the_task_id(pristine: Path, tmp_path: Path) -> None:
    """The folder given is only a location: the task keeps its id (its directory name)."""
    done = runner.invoke(app, ["materialize", str(pristine), "alpha",
                               "--to", str(tmp_path / "mat" / "other")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "mat" / "other" / "alpha" / "task.toml").is_file()
    assert f"-> {tmp_path / 'mat' / 'other' / 'alpha'}" in said(done)
    done = runner.invoke(app, ["materialize", str(pristine), "bravo",
                               "--to", str(tmp_path / "mat" / "bravo")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "mat" / "bravo" / "task.toml").is_file()


def test_build_refuses_a_splits_file_with_a_name_datasets_cannot_load(
        pristine: Path, tmp_path: Path) -> None:
    splits = tmp_path / "splits.jsonl"
    splits.write_text("".join(json.dumps({"task_id": t, "split": "rl-train", "role": "train",
                                          "pass_rate": 0.5, "source": "corpus",
                                          "schema_version": "1.0"}) + "\n"
                              for t in ("alpha", "bravo")))
    done = runner.invoke(app, ["build", "environments", "-t", str(pristine.parent / "tasks"),
                               "-o", str(tmp_path / "out"), "--splits", str(splits)])
    assert done.exit_code == 1
    assert "split name 'rl-train'" in said(done) and "rl_train" in said(done)


@pytest.mark.parametrize("command", ["grade", "generate"])
def test_an_api_key_variable_named_on_purpose_must_be_set(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo in --api-key-env would send every request without a key: refused up front."""
    monkeypatch.delenv("TG_TEST_UNSET_KEY", raising=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("domains: []\n")
    first = [str(tmp_path / "tasks")] if command == "grade" else ["--spec", str(spec)]
    args = [command, *first, "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
            "-o", str(tmp_path / "out")]
    result = runner.invoke(app, [*args, "--api-key-env", "TG_TEST_UNSET_KEY"])
    assert result.exit_code == 1, result.output
    assert ("--api-key-env TG_TEST_UNSET_KEY: the variable TG_TEST_UNSET_KEY is not set"
            in said(result)), said(result)
    assert "export TG_TEST_UNSET_KEY=" in said(result)
    monkeypatch.setenv("TG_TEST_UNSET_KEY", "sk-test")
    set_here = runner.invoke(app, [*args, "--api-key-env", "TG_TEST_UNSET_KEY"])
    assert "TG_TEST_UNSET_KEY is not set" not in said(set_here), said(set_here)
    no_key = runner.invoke(app, [*args, "--api-key-env", ""])
    assert "is not set" not in said(no_key), said(no_key)
