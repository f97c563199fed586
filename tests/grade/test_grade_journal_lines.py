"""A malformed line in a run's ``trials.jsonl`` stops ``grade`` and ``regrade`` (issue 44,
item 5). Before, both resumed past it (exit 0, "next: termgrade labels") and then
``labels``, ``report``, ``view`` and ``build`` refused the file. Now each stops before
grading anything, naming the file, the line and the fix; the line stays in the file.

Grading uses the real runner with a scripted trial function (no containers); the regrade
refusals happen before any scoring, through the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.cli.app import app
from termgrade.core.errors import RecordError
from termgrade.grade import TRIALS_FILE, TrialJob, grade_model
from termgrade.grade.record import graded_record
from termgrade.grade.runner import GradeReport
from termgrade.records.journal import read_journal
from termgrade.records.trial import TrialRecord
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from tests.support.task_dirs import MakeTask

AGENT = ModelAgent(Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None),
                   ScaffoldConfig())
runner = CliRunner()


def _fails(job: TrialJob) -> TrialRecord:
    now = datetime.now(UTC)
    return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                         retry_index=job.retry_index, started_at=now, finished_at=now,
                         job_id=job.job_id,
                         outcome=RunOutcome(job.agent.name, VerifierResult(reward=0.0)))


@pytest.fixture
def graded(make_task: MakeTask, tmp_path: Path) -> tuple[Path, Path]:
    """(tasks folder, output folder): one task graded k=2, then line 2 spoiled (a bad
    field, as a hand edit leaves it)."""
    tasks = make_task("task-a").parent
    out = tmp_path / "out"
    grade_model([tasks], AGENT, out, k=2, workers=1, progress=False, run=_fails)
    path = out / TRIALS_FILE
    first, second = path.read_text().splitlines()
    spoiled = json.loads(second) | {"reward": "zero"}
    path.write_text(first + "\n" + json.dumps(spoiled) + "\n")
    return tasks, out


def test_grade_stops_on_a_malformed_journal_line(graded: tuple[Path, Path]) -> None:
    tasks, out = graded
    path = out / TRIALS_FILE
    before = path.read_bytes()
    with pytest.raises(RecordError) as refused:
        grade_model([tasks], AGENT, out, k=3, workers=1, progress=False, run=_fails)
    said = str(refused.value)
    assert f"{path}:2" in said and "'reward'" in said, said
    assert "repair or delete the line" in said and "nothing was graded" in said
    assert path.read_bytes() == before


def test_a_finished_run_over_an_unreadable_line_is_not_reported_done(
        graded: tuple[Path, Path]) -> None:
    _, out = graded
    path = out / TRIALS_FILE
    read = read_journal(path, TrialRecord)
    report = GradeReport(path, read.records, resumed=0, summary=None,  # type: ignore[arg-type]
                         wall_s=0.0, unreadable=read.unreadable)
    with pytest.raises(RecordError, match=f"{path}:2.*this run's trials are in it"):
        report.check()


def test_regrade_stops_on_a_malformed_line_of_its_source_or_its_own_journal(
        graded: tuple[Path, Path], tmp_path: Path) -> None:
    tasks, out = graded
    new = tmp_path / "regrade"
    done = runner.invoke(app, ["regrade", str(out), "--tasks", str(tasks), "-o", str(new)])
    assert done.exit_code != 0
    assert f"{out / TRIALS_FILE}:2" in " ".join(done.output.split()), done.output
    assert "next: termgrade labels" not in done.output
    assert not new.exists()
    # a valid source, a spoiled regrade journal being resumed
    path = out / TRIALS_FILE
    kept = path.read_text().splitlines()[0]
    path.write_text(kept + "\n")
    new.mkdir()
    (new / TRIALS_FILE).write_text(kept.replace('"reward":', '"reward": "x", "r":') + "\n")
    done = runner.invoke(app, ["regrade", str(out), "--tasks", str(tasks), "-o", str(new)])
    assert done.exit_code != 0
    assert f"{new / TRIALS_FILE}:1" in " ".join(done.output.split()), done.output
    assert "next: termgrade labels" not in done.output
