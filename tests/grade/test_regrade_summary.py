"""Issue 44, item 11: the regrade summary said "reward 0.0 -> 0.0; test_x" (no direction,
no message) and listed trials of tasks outside --tasks as "must be rerun"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.cli import app
from termgrade.cli.regrade import change_said
from termgrade.grade.errors import RegradeIncompleteError
from termgrade.grade.journal import TRIALS_FILE
from termgrade.grade.regrade import regrade_run
from termgrade.records.trial import TrialRecord
from tests.support.labels import trial
from tests.support.task_dirs import MakeTask


def _record(passed: bool, outcomes: dict[str, str], said: list[str]) -> TrialRecord:
    return TrialRecord.model_validate({
        **trial("alpha", "m", passed=passed), "job_id": "j1",
        "tests": [{"name": n, "outcome": o} for n, o in outcomes.items()],
        "failure_messages": said})


def test_a_change_says_its_direction_and_what_the_new_failure_said() -> None:
    before = _record(True, {"test_a": "passed", "test_b": "passed"}, [])
    after = _record(False, {"test_a": "passed", "test_b": "failed"},
                    ["test_b: AssertionError: expected 3 lines, got 2"])
    assert change_said(before, after) == (
        "reward 1.0 -> 0.0 (fails now): test_b passed -> failed: AssertionError: expected "
        "3 lines, got 2")
    assert change_said(after, before) == "reward 0.0 -> 1.0 (passes now): test_b failed " \
        "-> passed"


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "graded"
    source.mkdir()
    rows = [{**trial(task, "m", attempt=i), "job_id": "j1"}
            for task in ("alpha", "bravo") for i in range(2)]
    (source / TRIALS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return source


def test_trials_of_tasks_outside_tasks_are_not_must_be_rerun(
        tmp_path: Path, make_task: MakeTask) -> None:
    source = _source(tmp_path)
    make_task("alpha")  # asked for; its work was not kept: must be rerun
    report = regrade_run(source, [tmp_path / "tasks"], tmp_path / "out", progress=False)
    assert sorted(report.must_rerun) == ["alpha__m__0__0", "alpha__m__1__0"]
    assert sorted(report.not_asked) == ["bravo__m__0__0", "bravo__m__1__0"]
    done = CliRunner().invoke(app, ["regrade", str(source), "--tasks",
                                    str(tmp_path / "tasks"), "-o", str(tmp_path / "out2")])
    out = " ".join(done.output.split())
    assert "2 trial(s) must be rerun" in out and "bravo__m__0__0" not in out
    assert "2 trial(s) of tasks not under --tasks left as they are" in out


def test_a_regrade_of_no_asked_task_says_so(tmp_path: Path, make_task: MakeTask) -> None:
    source = _source(tmp_path)
    make_task("charlie")
    report = regrade_run(source, [tmp_path / "tasks"], tmp_path / "out", progress=False)
    assert report.must_rerun == {} and len(report.not_asked) == 4
    with pytest.raises(RegradeIncompleteError, match="none of the run's 4 trial"):
        report.check()
