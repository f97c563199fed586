"""Issue 44, item 11: a run that reused every trial said "running 0 trial(s)", and
`termgrade runs` gave a reuse run the start of its oldest reused trial (the earlier run's),
not its own. The trial runner is the stand-in of test_grade_runs.py: no containers."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from termgrade.cli.grade import start_said
from termgrade.grade import grade_model
from termgrade.grade.runs import list_runs
from tests.grade.test_grade_runs import AGENT, passes_even
from tests.support.task_dirs import MakeTask


@pytest.fixture
def tasks(make_task: MakeTask) -> Path:
    for name in ("task-a", "task-b"):
        root = make_task(name)
    return root.parent


def test_a_run_that_reuses_every_trial_says_nothing_runs_and_starts_when_it_started(
        tasks: Path, tmp_path: Path) -> None:
    grade_model([tasks], AGENT, tmp_path / "a", k=2, workers=2, progress=False,
                run=passes_even)
    time.sleep(1.1)
    said: list[str] = []
    report = grade_model([tasks], AGENT, tmp_path / "b", k=2, workers=2, progress=False,
                         run=passes_even, reuse=tmp_path / "a",
                         on_start=lambda n: said.append(start_said(n, "this machine")))
    assert (report.reused, report.graded) == (4, 0)
    assert len(said) == 1 and "running 0" not in said[0] and "nothing to run" in said[0]
    assert start_said(2, "this machine") == "running 2 trial(s) at once on this machine"
    (a_run,) = list_runs(tmp_path / "a").runs
    (b_run,) = list_runs(tmp_path / "b").runs
    assert a_run.started is not None and b_run.started is not None
    assert b_run.reused == 4 and (b_run.started - a_run.started).total_seconds() >= 1
    assert b_run.record is not None and b_run.started == b_run.record.started_at
