"""A run's facts are written where they are born (issue 35, item 4): ``grade`` writes one
:class:`RunRecord` per run (k, adaptive stopping, model, endpoint, scaffold, run id) to
``runs.jsonl``; ``labels`` reads ``k`` from it and, after an adaptive run, does not ask for
the attempts the run skipped by design. Without the record it falls back to guessing, and
the warning comes back (the check can fail).

The trial runner is a scripted stand-in (a record made by the real ``graded_record``); the
labels command runs through Typer's runner."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.agent.scaffold import SCAFFOLD_NAME
from termgrade.cli.app import app
from termgrade.grade import TRIALS_FILE, AdaptiveRule, TrialJob, TrialJournal, grade_model
from termgrade.grade.record import graded_record
from termgrade.grade.runs import list_runs
from termgrade.passrates.inputs import load_inputs
from termgrade.records.journal import read_journal
from termgrade.records.run import RUNS_FILE, RunRecord, read_runs
from termgrade.records.trial import TrialRecord
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.view import find_sources, load_run
from tests.support.task_dirs import MakeTask

ENDPOINT = Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None)
AGENT = ModelAgent(ENDPOINT, ScaffoldConfig())
RULE = AdaptiveRule(k_min=2, k_max=8, confidence=0.8)
runner = CliRunner()


def central_a_else_fail(job: TrialJob) -> TrialRecord:
    """task-a alternates (central: it gets k_max); every other task fails (decided early)."""
    now = datetime.now(UTC)
    passed = job.task_id == "task-a" and job.attempt % 2 == 0
    outcome = RunOutcome(job.agent.name, VerifierResult(reward=float(passed)))
    return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                         retry_index=job.retry_index, outcome=outcome, started_at=now,
                         finished_at=now, job_id=job.job_id)


@pytest.fixture
def tasks(make_task: MakeTask) -> Path:
    for name in ("task-a", "task-b", "task-c", "task-d"):
        root = make_task(name)
    return root.parent


def _grade(tasks: Path, out: Path, rule: AdaptiveRule = RULE) -> None:
    grade_model([tasks], AGENT, out, adaptive=rule, workers=2, progress=False,
                run=central_a_else_fail)


def test_the_run_record_holds_what_the_run_planned(tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _grade(tasks, out)
    records = read_journal(out / RUNS_FILE, RunRecord).records
    assert len(records) == 1
    run = records[0]
    trials = TrialJournal(out / TRIALS_FILE).load()
    assert {t.job_id for t in trials} == {run.job_id}
    assert (run.k, run.k_min, run.adaptive, run.confidence) == (8, 2, True, 0.8)
    assert (run.model, run.endpoint, run.scaffold) == ("stand-in-model", ENDPOINT.base_url,
                                                       SCAFFOLD_NAME)
    assert run.scaffold_digest == trials[0].scaffold_digest and run.tasks == 4
    _grade(tasks, out)  # a resume with the same plan writes nothing
    assert len(read_journal(out / RUNS_FILE, RunRecord).records) == 1
    _grade(tasks, out, AdaptiveRule(k_min=2, k_max=10, confidence=0.8))  # a changed plan
    assert [r.k for r in read_journal(out / RUNS_FILE, RunRecord).records] == [8, 10]
    assert read_runs([out / TRIALS_FILE])[run.job_id].k == 10
    listed = list_runs(out).runs
    assert len(listed) == 1 and listed[0].record is not None and listed[0].record.k == 10
    done = runner.invoke(app, ["runs", str(out), "--json"])
    assert done.exit_code == 0, done.output
    shown = json.loads(done.output.splitlines()[-1])["record"]
    assert (shown["k"], shown["k_min"], shown["adaptive"]) == (10, 2, True)


def _labels(out: Path, tmp_path: Path) -> tuple[list[dict[str, object]], str]:
    target = tmp_path / "labels.jsonl"
    done = runner.invoke(app, ["labels", str(out / TRIALS_FILE), "-o", str(target)])
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in target.read_text().splitlines()], done.output


def test_labels_read_k_from_the_run_and_respect_adaptive_stops(tasks: Path,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "out"
    _grade(tasks, out)
    rows, output = _labels(out, tmp_path)
    counted = {r["task_id"]: r["n_counted"] for r in rows}
    assert counted["task-a"] == 8 and min(counted.values()) < 8  # some stopped early
    assert {r["k"] for r in rows} == {8}
    assert "rerun" not in output and "fewer than" not in output
    # report and view compute the same labels from the same run records
    report = load_inputs([out / TRIALS_FILE])
    view = load_run(find_sources(out))
    for frame in (report.labels, view.labels):
        assert set(frame["k"]) == {8}
    assert "mixed_k" not in {i.kind for i in report.issues}
    # Without the run record, labels must guess: the stops look like missing attempts.
    (out / RUNS_FILE).unlink()
    _, guessed = _labels(out, tmp_path)
    assert "fewer than" in guessed and "rerun" in guessed
    assert "mixed_k" in {i.kind for i in load_inputs([out / TRIALS_FILE]).issues}


def test_an_adaptive_task_short_of_k_min_is_still_reported(tasks: Path,
                                                           tmp_path: Path) -> None:
    out = tmp_path / "out"
    _grade(tasks, out)
    journal = out / TRIALS_FILE
    lines = journal.read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["task_id"] != "task-d"
            or json.loads(line)["attempt"] == 0]
    journal.write_text("\n".join(kept) + "\n")
    _, output = _labels(out, tmp_path)
    assert "fewer than the k_min=2" in " ".join(output.split()), output


def test_a_smaller_k_on_resume_is_refused_and_a_new_run_records_it(tasks: Path,
                                                                 tmp_path: Path) -> None:
    """Issue 44, item 3: `-k 1` into a folder whose run planned k=3 rewrote its k (labels
    then said k 1 with 3 counted). Now it is refused with the fix, nothing written; a new
    run (`--run-name`) records its own k beside the first."""
    from termgrade.core.errors import OptionError

    out = tmp_path / "out"
    _grade(tasks, out, AdaptiveRule(k_min=3, k_max=3))
    before = {name: (out / name).read_bytes() for name in (TRIALS_FILE, RUNS_FILE)}
    with pytest.raises(OptionError) as refused:
        _grade(tasks, out, AdaptiveRule(k_min=1, k_max=1))
    said = str(refused.value) + " " + (refused.value.fix or "")
    assert "planned k=3" in said and "-k 3" in said and "--run-name" in said, said
    assert {name: (out / name).read_bytes() for name in before} == before
    rows, _ = _labels(out, tmp_path)
    assert {(r["k"], r["n_counted"]) for r in rows} == {(3, 3)}
    grade_model([tasks], AGENT, out, k=1, workers=2, progress=False,
                run=central_a_else_fail, run_name="k1")
    assert sorted(r.k for r in read_runs([out]).values()) == [1, 3]
    rows, _ = _labels(out, tmp_path)
    assert {(r["k"], r["n_counted"]) for r in rows} == {(4, 4)}
