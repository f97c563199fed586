"""Runs are records (issue 33, item 5): each ``grade`` run has an id and, when given, a
name; trial ids are unique across runs; ``labels``, ``report`` and ``view`` combine runs
of one model and keep their configurations apart; ``termgrade runs DIR`` lists them.

The trial runner is the scripted stand-in of tests/grade/test_grade_runner.py (a record
made by the real ``graded_record``); the CLI commands run through Typer's runner. Before
runs had ids, two runs of one model shared trial ids and ``labels`` refused them with
"give retries their own trial_id".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.cli.app import app
from termgrade.core.errors import OptionError
from termgrade.grade import TRIALS_FILE, GradeReport, TrialJob, TrialJournal, grade_model
from termgrade.grade.record import graded_record
from termgrade.grade.runs import list_runs
from termgrade.labels.compute import compute_labels
from termgrade.records.trial import TrialRecord
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.trialsets.io import read_trials
from termgrade.view import find_sources, load_run
from tests.support.labels import trial, write_jsonl
from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution
from tests.support.task_dirs import MakeTask

ENDPOINT = Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None)
AGENT = ModelAgent(ENDPOINT, ScaffoldConfig())
HOT = ModelAgent(ENDPOINT, ScaffoldConfig(temperature=1.0))
runner = CliRunner()


def passes_even(job: TrialJob) -> TrialRecord:
    """Attempts 0, 2, ... pass; the record is the real one, in the job's run."""
    now = datetime.now(UTC)
    outcome = RunOutcome(job.agent.name, VerifierResult(reward=float(job.attempt % 2 == 0)))
    return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                         retry_index=job.retry_index, outcome=outcome, started_at=now,
                         finished_at=now, job_id=job.job_id)


@pytest.fixture
def tasks(make_task: MakeTask) -> Path:
    for name in ("task-a", "task-b", "task-c"):
        root = make_task(name)
    return root.parent


def grade(tasks: Path, out: Path, k: int = 2, agent: ModelAgent = AGENT, *,
          run_name: str | None = None, reuse: Path | None = None) -> GradeReport:
    return grade_model([tasks], agent, out, k=k, workers=2, progress=False, run=passes_even,
                       run_name=run_name, reuse=reuse)


def test_two_named_runs_share_a_folder_and_each_resumes_by_name(tasks: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = grade(tasks, out, run_name="baseline")
    second = grade(tasks, out, run_name="again")
    assert first.run and second.run and first.run.job_id != second.run.job_id
    assert not first.run.resumed and not second.run.resumed
    records = TrialJournal(out / TRIALS_FILE).load()
    assert len(records) == 12 and len({r.trial_id for r in records}) == 12
    assert all(r.trial_id.startswith(f"{r.job_id}__") for r in records)
    assert Counter(r.run_name for r in records) == {"baseline": 6, "again": 6}
    again = grade(tasks, out, run_name="baseline")  # the named run resumes: nothing to do
    assert again.run and again.run.resumed and again.run.job_id == first.run.job_id
    assert again.graded == 0 and again.resumed == 6
    last = grade(tasks, out, k=3)  # no name: the last run of the model resumes
    assert last.run and last.run.job_id == second.run.job_id and last.graded == 3
    listed = list_runs(out).runs
    assert [(r.name, r.trials, len(r.tasks)) for r in listed] == [("baseline", 6, 3),
                                                                  ("again", 9, 3)]
    labels = compute_labels(read_trials([out / TRIALS_FILE])).frame
    assert labels["n_counted"].tolist() == [5, 5, 5]  # both runs, pooled


def test_two_run_folders_of_one_model_combine_in_labels_report_and_view(
        tasks: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    grade(tasks, runs / "monday")
    grade(tasks, runs / "tuesday")
    files = [str(runs / name / TRIALS_FILE) for name in ("monday", "tuesday")]
    done = runner.invoke(app, ["labels", *files, "-o", str(tmp_path / "labels.jsonl")])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert [(r["n_counted"], r["n_passed"]) for r in rows] == [(4, 2)] * 3
    done = runner.invoke(app, ["report", *files, "-o", str(tmp_path / "report"),
                               "--no-plots", "--n-boot", "0"])
    assert done.exit_code == 0, done.output
    index = load_run(find_sources(runs))  # the folder of run folders
    assert set(index.trials["job_id"]) == {
        str(r.job_id) for f in files for r in TrialJournal(Path(f)).load()}
    assert index.cells["n_counted"].tolist() == [4, 4, 4]


def test_runs_of_different_configurations_are_kept_apart(tasks: Path,
                                                          tmp_path: Path) -> None:
    grade(tasks, tmp_path / "cool")
    grade(tasks, tmp_path / "hot", agent=HOT)
    trials = read_trials([tmp_path / "cool" / TRIALS_FILE, tmp_path / "hot" / TRIALS_FILE])
    assert "configurations" in {issue.kind for issue in trials.issues}
    labels = compute_labels(trials).frame
    assert len(labels) == 6 and labels["n_counted"].tolist() == [2] * 6
    assert labels["scaffold"].nunique() == 2
    assert all(s.startswith("bash-tool@") for s in labels["scaffold"])


def test_reused_trials_count_once_when_the_runs_combine(tasks: Path, tmp_path: Path) -> None:
    grade(tasks, tmp_path / "a")
    report = grade(tasks, tmp_path / "b", k=3, reuse=tmp_path / "a")
    assert (report.reused, report.graded) == (6, 3)
    (b_run,) = list_runs(tmp_path / "b").runs
    assert (b_run.trials, b_run.reused) == (9, 6)
    trials = read_trials([tmp_path / "a" / TRIALS_FILE, tmp_path / "b" / TRIALS_FILE])
    assert "reused_trial" in {issue.kind for issue in trials.issues}
    assert compute_labels(trials).frame["n_counted"].tolist() == [3, 3, 3]


def test_files_from_before_run_ids_resume_and_combine(tasks: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    now = datetime.now(UTC)
    write_jsonl(old / TRIALS_FILE, [json.loads(graded_record(
        task_id="task-a", model=AGENT.name, attempt=0, retry_index=0, started_at=now,
        finished_at=now, outcome=RunOutcome(AGENT.name, VerifierResult(reward=1.0))
    ).model_dump_json())])
    report = grade(tasks, old)  # resumes the run without an id, in its old trial ids
    assert report.run and report.run.job_id is None and report.resumed == 1
    records = TrialJournal(old / TRIALS_FILE).load()
    assert len(records) == 6 and all(r.job_id is None for r in records)
    assert "task-a__stand-in-model__a0__r0" in {r.trial_id for r in records}
    # two such files of one model: each file is its own run
    one = write_jsonl(tmp_path / "one.jsonl", [trial("t", passed=True)])
    two = write_jsonl(tmp_path / "two.jsonl", [trial("t", passed=False)])
    labels = compute_labels(read_trials([one, two])).frame
    assert labels[["n_counted", "n_passed"]].values.tolist() == [[2, 1]]


def test_termgrade_runs_lists_a_folder(tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    grade(tasks, out, run_name="baseline")
    grade(tasks, out, k=1, run_name="quick")
    done = runner.invoke(app, ["runs", str(out), "--json"])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["run_name"], r["model"], r["tasks"], r["trials"], r["counted"]) for r in rows] \
        == [("baseline", "stand-in-model", 3, 6, 6), ("quick", "stand-in-model", 3, 3, 3)]
    done = runner.invoke(app, ["runs", str(tmp_path)], env={"COLUMNS": "250"})
    assert done.exit_code == 0, done.output
    assert "baseline" in done.stdout and "quick" in done.stdout


def test_a_run_name_that_cannot_start_a_trial_id_is_refused(tasks: Path,
                                                            tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="run name"):
        grade(tasks, tmp_path / "out", run_name="a b/c")


@pytest.mark.docker
@pytest.mark.slow
def test_two_real_named_runs_into_one_folder_list_and_combine(tmp_path: Path) -> None:
    """The real command, twice, against a scripted endpoint on loopback and real Docker."""
    root = Path(__file__).resolve().parents[2]
    task = root / "environments" / "word-frequency"
    env = {**os.environ, "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1",
           "COLUMNS": "250", "PYTHONPATH": str(root)}
    model = "scripted-tool-stand-in"
    out = tmp_path / "runs"
    with ScriptedToolEndpoint(replay_solution((task / "solution" / "solve.sh").read_text()),
                              model=model) as llm:
        for name in ("first", "second"):
            done = subprocess.run(
                [sys.executable, "-m", "termgrade", "grade", str(task), "--model", model,
                 "--base-url", llm.url, "-k", "1", "-o", str(out), "--run-name", name],
                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stdout + done.stderr
            assert f"({name})" in done.stderr
    listed = subprocess.run([sys.executable, "-m", "termgrade", "runs", str(out), "--json"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["run_name"], r["trials"], r["passed"]) for r in rows] == [("first", 1, 1),
                                                                         ("second", 1, 1)]
    labels = compute_labels(read_trials([out / TRIALS_FILE])).frame
    assert labels[["n_counted", "n_passed"]].values.tolist() == [[2, 2]]


def attested_but_c(job: TrialJob) -> TrialRecord:
    """As :func:`passes_even`; task-c's verifier is unattested (test.sh's own reward)."""
    now = datetime.now(UTC)
    outcome = RunOutcome(job.agent.name, VerifierResult(reward=float(job.attempt % 2 == 0)),
                         attested=job.task_id != "task-c")
    return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                         retry_index=job.retry_index, outcome=outcome, started_at=now,
                         finished_at=now, job_id=job.job_id)


@pytest.mark.parametrize("width", [80, 120])
def test_termgrade_runs_is_readable_at_80_and_120_columns_and_splits_attested(
        tasks: Path, tmp_path: Path, width: int) -> None:
    """Issue 44, items 9 and 12: the 13-column table folded every 3-4 characters at 80
    columns (ids and names cut mid-word), and pooled attested with unattested passes."""
    out = tmp_path / "out"
    report = grade_model([tasks], AGENT, out, k=2, workers=2, progress=False,
                         run=attested_but_c, run_name="baseline")
    assert report.run is not None and report.run.job_id is not None
    done = runner.invoke(app, ["runs", str(out)], env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert all(len(line) <= width for line in lines), done.stdout
    assert any(f"{report.run.job_id} (baseline)" in line for line in lines), done.stdout
    assert any("stand-in-model" in line and "bash-tool" in line for line in lines)
    assert any("attested 0.50 of 4, unattested 0.50 of 2" in line for line in lines), \
        done.stdout
    done = runner.invoke(app, ["runs", str(out), "--json"])
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["by_attestation"] == {"attested": {"counted": 4, "passed": 2},
                                     "unattested": {"counted": 2, "passed": 1}}
