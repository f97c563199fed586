"""A regrade read with its source counts each real attempt once (issue 44, item 1).

A ``grade`` run (the real runner, a scripted trial function) graded one task k=3 times; a
``regrade`` of it (the real :func:`~termgrade.grade.regrade.regraded` records and a run
record naming its source, as ``regrade_run`` writes them) scored the same attempts again.
``labels``, ``report`` and ``view`` given both folders read 3 attempts, not 6: the
regrade's trial supersedes the trial it regraded, and one stderr line says so. Without
that, k was 6 and 6 trials were counted (the check fails with the supersession removed)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.cli.app import app
from termgrade.grade import TRIALS_FILE, TrialJob, TrialJournal, grade_model
from termgrade.grade.record import graded_record
from termgrade.grade.regrade import regraded
from termgrade.grade.runs import new_job_id, note_run
from termgrade.passrates.inputs import load_inputs
from termgrade.records.run import read_runs
from termgrade.records.trial import TrialRecord
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.trialsets import write_trials
from termgrade.view import find_sources, load_run
from tests.support.task_dirs import MakeTask

ENDPOINT = Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None)
runner = CliRunner()


def always_fails(job: TrialJob) -> TrialRecord:
    now = datetime.now(UTC)
    outcome = RunOutcome(job.agent.name, VerifierResult(reward=0.0))
    return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                         retry_index=job.retry_index, outcome=outcome, started_at=now,
                         finished_at=now, job_id=job.job_id)


@pytest.fixture
def runs(make_task: MakeTask, tmp_path: Path) -> Path:
    """``tmp_path/runs``: ``source`` (k=3, every attempt failed) and ``regrade`` (the
    first two attempts scored again: passed)."""
    root = make_task("task-a")
    source = tmp_path / "runs" / "source"
    grade_model([root], ModelAgent(ENDPOINT, ScaffoldConfig()), source, k=3, workers=1,
                progress=False, run=always_fails)
    trials = TrialJournal(source / TRIALS_FILE).load()
    assert len(trials) == 3
    (run,) = read_runs([source]).values()
    regrade = tmp_path / "runs" / "regrade"
    regrade.mkdir()
    job_id = new_job_id("regrade")
    note_run(regrade, run.model_copy(update={"job_id": job_id, "regrade_of": run.job_id}))
    now = datetime.now(UTC)
    passing = RunOutcome(run.model, VerifierResult(reward=1.0))
    write_trials(regrade / TRIALS_FILE, [
        regraded(t, passing, job_id=job_id, run_name=None, started_at=now,
                 task_digest=t.task_digest) for t in trials[:2]])
    return tmp_path / "runs"


def test_labels_count_a_regraded_attempt_once(runs: Path, tmp_path: Path) -> None:
    target = tmp_path / "labels.jsonl"
    done = runner.invoke(app, ["labels", str(runs / "source" / TRIALS_FILE),
                               str(runs / "regrade" / TRIALS_FILE), "-o", str(target)])
    assert done.exit_code == 0, done.output
    (row,) = [json.loads(line) for line in target.read_text().splitlines()]
    assert (row["k"], row["n_counted"], row["n_passed"]) == (3, 3, 2)
    said = [line for line in done.output.splitlines() if "termgrade regrade" in line]
    assert len(said) == 1 and "2 trial(s)" in said[0], done.output
    assert "fewer than" not in done.output


def test_view_and_report_pool_a_regrade_the_same_way(runs: Path) -> None:
    view = load_run(find_sources(runs))
    (cell,) = view.cells.to_dict("records")
    assert (cell["k"], cell["n_counted"], cell["n_passed"], cell["n_trials"]) == (3, 3, 2, 3)
    assert "regraded" in {i.kind for i in view.issues}
    report = load_inputs([runs / "source" / TRIALS_FILE, runs / "regrade" / TRIALS_FILE])
    assert report.labels[["k", "n_counted", "n_passed"]].values.tolist() == [[3, 3, 2]]


def test_a_regrade_alone_keeps_its_source_plan(runs: Path, tmp_path: Path) -> None:
    target = tmp_path / "labels.jsonl"
    done = runner.invoke(app, ["labels", str(runs / "regrade" / TRIALS_FILE), "-o",
                               str(target)])
    assert done.exit_code == 0, done.output
    (row,) = [json.loads(line) for line in target.read_text().splitlines()]
    assert (row["k"], row["n_counted"]) == (3, 2)
    assert "termgrade regrade" not in done.output
