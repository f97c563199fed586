"""The grading runner without containers: which attempts run, the journal, retries, resume.

The trial runner is replaced by a scripted stand-in (``run=``) that returns the record a
real trial would; the Docker tests (tests/grade/test_grade_scaffold.py,
tests/grade/test_grade_cli.py) run real ones. What this checks: exactly k counted attempts
per task, losses recorded uncounted and retried under the same attempt, a task given up
after too many losses, a killed run resumed without redoing or duplicating a trial, a torn
journal line dropped, and an endpoint that refuses every request stopping the run.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.grade import (
    TRIALS_FILE,
    AdaptiveRule,
    TrialJob,
    TrialJournal,
    grade_model,
)
from termgrade.grade.errors import GradeAborted, GradeIncompleteError
from termgrade.grade.record import ENDPOINT_UNUSABLE, graded_record, trial_id
from termgrade.labels.compute import compute_labels
from termgrade.records.trial import TrialRecord
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.trialsets.io import read_trials
from tests.support.task_dirs import MakeTask

AGENT = ModelAgent(Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None),
                   ScaffoldConfig())


def scripted(passes: Callable[[TrialJob], bool | None]) -> Callable[[TrialJob], TrialRecord]:
    """A trial runner stand-in: ``passes(job)`` is True/False (counted) or None (lost). The
    record is made by the real :func:`~termgrade.grade.record.graded_record`."""

    def run(job: TrialJob) -> TrialRecord:
        verdict = passes(job)
        now = datetime.now(UTC)
        outcome = (RunOutcome(job.agent.name, None, error="engine gone") if verdict is None
                   else RunOutcome(job.agent.name, VerifierResult(reward=float(verdict))))
        return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                             retry_index=job.retry_index, outcome=outcome, started_at=now,
                             job_id=job.job_id,
                             finished_at=now)

    return run


@pytest.fixture
def tasks(make_task: MakeTask) -> Path:
    for name in ("task-a", "task-b", "task-c"):
        root = make_task(name)
    return root.parent


def _records(out: Path) -> list[TrialRecord]:
    return TrialJournal(out / TRIALS_FILE).load()


def test_fixed_k_runs_exactly_k_counted_attempts_per_task(tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = grade_model([tasks], AGENT, out, k=3, workers=2, progress=False,
                         run=scripted(lambda job: job.task_id != "task-c"))
    records = _records(out)
    assert len(records) == 9 and len({r.trial_id for r in records}) == 9
    assert Counter(r.task_id for r in records) == {"task-a": 3, "task-b": 3, "task-c": 3}
    assert sorted(r.attempt for r in records if r.task_id == "task-a") == [0, 1, 2]
    assert report.pass_rate == pytest.approx(6 / 9)
    labels = compute_labels(read_trials([out / TRIALS_FILE])).frame.set_index("task_id")
    assert labels.loc["task-a", "pass_rate"] == 1.0 and labels.loc["task-c", "pass_rate"] == 0.0
    assert set(labels["n_counted"]) == {3} and set(labels["k"]) == {3}


def test_lost_trials_are_recorded_uncounted_and_rerun_under_the_same_attempt(
        tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = grade_model([tasks], AGENT, out, k=2, workers=3, progress=False,
                         run=scripted(lambda job: None if job.retry_index == 0 else True))
    records = _records(out)
    lost = [r for r in records if not r.counted]
    counted = [r for r in records if r.counted]
    assert len(lost) == 6 and len(counted) == 6 and report.lost == 6
    for record in counted:
        assert record.retry_index == 1
        assert record.retry_of == trial_id(record.task_id, record.model, record.attempt, 0,
                                           record.job_id)
    labels = compute_labels(read_trials([out / TRIALS_FILE])).frame
    assert set(labels["n_counted"]) == {2} and set(labels["pass_rate"]) == {1.0}


def test_a_task_is_given_up_after_too_many_losses_of_one_attempt(tasks: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = grade_model([tasks], AGENT, out, k=2, workers=2, max_losses=2, progress=False,
                         run=scripted(lambda job: None if job.task_id == "task-b" else True))
    assert report.abandoned == ["task-b"]
    records = _records(out)
    tries = Counter(r.attempt for r in records if r.task_id == "task-b")
    assert max(tries.values()) == 3 and all(n <= 3 for n in tries.values())  # 1 + 2 retries
    assert all(not r.counted for r in records if r.task_id == "task-b")
    assert sum(r.counted for r in records) == 4


def test_a_run_that_lost_a_task_or_counted_nothing_reports_itself_incomplete(
        tasks: Path, tmp_path: Path) -> None:
    report = grade_model([tasks], AGENT, tmp_path / "some", k=1, workers=2, max_losses=1,
                         progress=False,
                         run=scripted(lambda job: None if job.task_id == "task-b" else True))
    with pytest.raises(GradeIncompleteError) as caught:
        report.check()
    assert "1 task(s) lost" in str(caught.value) and "task-b" in str(caught.value)
    assert "engine gone" in str(caught.value) and "rerun the same command" in str(caught.value)
    report = grade_model([tasks], AGENT, tmp_path / "none", k=1, workers=2, max_losses=1,
                         progress=False, run=scripted(lambda job: None))
    with pytest.raises(GradeIncompleteError, match="no trial was counted: 6 trial"):
        report.check()
    report = grade_model([tasks], AGENT, tmp_path / "all", k=1, workers=2, progress=False,
                         run=scripted(lambda job: True))
    report.check()  # every task measured: no error


def test_the_report_has_one_row_per_task_and_says_the_real_concurrency(
        tasks: Path, tmp_path: Path) -> None:
    inner = scripted(lambda job: None if (job.task_id, job.retry_index) == ("task-b", 0)
                     else job.task_id != "task-c" and job.attempt == 0)

    def with_retries(job: TrialJob) -> TrialRecord:
        record = inner(job)
        record.http_retries = 2 if job.task_id == "task-a" else 0
        return record

    started: list[int] = []
    report = grade_model([tasks], AGENT, tmp_path / "out", k=2, workers=8, progress=False,
                         run=with_retries, on_start=started.append)
    assert started == [6]  # 3 tasks x k=2, not the 8 workers
    rows = {t.task_id: t for t in report.tasks}
    assert [(t.counted, t.passed, t.lost, t.http_retries, t.band) for t in rows.values()] == [
        (2, 1, 0, 4, "central"), (2, 1, 2, 0, "central"), (2, 0, 0, 0, "zero")]
    assert rows["task-a"].pass_rate == 0.5 and rows["task-c"].pass_rate == 0.0
    started.clear()
    grade_model([tasks], AGENT, tmp_path / "one", k=1, workers=4, progress=False,
                run=with_retries, on_start=started.append)
    assert started == [3]


def test_the_live_rate_leaves_resumed_trials_out(tasks: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    grade_model([tasks], AGENT, out, k=1, workers=1, progress=False,
                run=scripted(lambda job: True))  # 3 passes, resumed below
    grade_model([tasks], AGENT, out, k=2, workers=1, progress=True,
                run=scripted(lambda job: False))
    live = capsys.readouterr().err
    assert "this run: pass 0/3 = 0.00" in live  # not 3/6: the resumed passes are not re-measured


def test_adaptive_grading_says_why_it_cannot_save_at_a_small_k() -> None:
    why = AdaptiveRule(k_max=4, confidence=0.9).why_no_saving()
    assert why is not None and "saves nothing at -k 4" in why
    assert "needs -k 6 or more" in why and "Fix: use -k 6 or more" in why
    assert AdaptiveRule(k_max=8, confidence=0.9).why_no_saving() is None


def test_an_executor_failure_is_a_loss_not_a_task_failure(tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    inner = scripted(lambda job: True)

    def flaky(job: TrialJob) -> TrialRecord:
        if job.retry_index == 0 and job.task_id == "task-a":
            raise RuntimeError("worker died")
        return inner(job)

    grade_model([tasks], AGENT, out, k=1, workers=1, progress=False, run=flaky)
    records = [r for r in _records(out) if r.task_id == "task-a"]
    assert [(r.counted, r.retry_index) for r in records] == [(False, 0), (True, 1)]
    assert "worker died" in (records[0].exception_message or "")


def test_a_killed_run_resumes_without_redoing_or_duplicating(tasks: Path,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = Counter[str]()
    lock = threading.Lock()
    inner = scripted(lambda job: job.attempt % 2 == 0)

    def dies_after_four(job: TrialJob) -> TrialRecord:
        with lock:
            done["n"] += 1
            if done["n"] > 4:
                raise KeyboardInterrupt
        return inner(job)

    with pytest.raises(KeyboardInterrupt):
        grade_model([tasks], AGENT, out, k=4, workers=1, progress=False, run=dies_after_four)
    first = _records(out)
    assert len(first) == 4
    with (out / TRIALS_FILE).open("a") as handle:
        handle.write('{"trial_id": "torn by the kill", "task_')  # a half-written line
    ran: list[str] = []

    def counting(job: TrialJob) -> TrialRecord:
        ran.append(trial_id(job.task_id, job.agent.name, job.attempt, job.retry_index,
                            job.job_id))
        return inner(job)

    report = grade_model([tasks], AGENT, out, k=4, workers=2, progress=False, run=counting)
    records = _records(out)
    assert report.resumed == 4 and len(ran) == 8
    assert not set(ran) & {r.trial_id for r in first}  # nothing redone
    assert len(records) == 12 and len({r.trial_id for r in records}) == 12  # none twice
    assert records[:4] == first
    assert "torn" not in (out / TRIALS_FILE).read_text()
    assert Counter(r.task_id for r in records) == {"task-a": 4, "task-b": 4, "task-c": 4}


def test_an_endpoint_that_refuses_every_request_stops_the_run(tasks: Path,
                                                              tmp_path: Path) -> None:
    def refused(job: TrialJob) -> TrialRecord:
        record = scripted(lambda _: None)(job)
        record.exception_type = ENDPOINT_UNUSABLE
        record.exception_message = "HTTP 404: model not found"
        return record

    with pytest.raises(GradeAborted, match="refuses every request"):
        grade_model([tasks], AGENT, tmp_path / "out", k=2, workers=1, progress=False,
                    run=refused)
    assert len(_records(tmp_path / "out")) == 1


def test_adaptive_grading_spends_fewer_trials_on_decided_tasks(make_task: MakeTask,
                                                               tmp_path: Path) -> None:
    for i in range(12):
        root = make_task(f"task-{i:02d}")
    rates = {f"task-{i:02d}": (0.0 if i < 5 else 1.0 if i < 10 else 0.5) for i in range(12)}

    def outcome(job: TrialJob) -> bool:
        rate = rates[job.task_id]
        return rate == 1.0 or (rate == 0.5 and job.attempt % 2 == 0)

    out = tmp_path / "out"
    report = grade_model([root.parent], AGENT, out, adaptive=AdaptiveRule(k_max=8),
                         workers=2, progress=False, run=scripted(outcome))
    per_task = Counter(r.task_id for r in _records(out))
    assert per_task["task-10"] == 8 and per_task["task-11"] == 8  # undecided: the full k
    assert max(per_task[f"task-{i:02d}"] for i in range(10)) < 8
    assert report.summary.trials_used == sum(per_task.values()) < 12 * 8


def test_tasks_a_skip_policy_leaves_out_are_in_the_report_with_why(
        make_task: MakeTask, tmp_path: Path) -> None:
    from tests.support.task_dirs import DEFAULT_TOML

    make_task("task-a")
    online = make_task("task-online", toml=DEFAULT_TOML + "[environment]\n"
                       "allow_internet = true\n")
    report = grade_model([online.parent], AGENT, tmp_path / "out", k=1, workers=1,
                         progress=False, internet_tasks="skip", run=scripted(lambda job: True))
    assert {r.task_id for r in report.records} == {"task-a"}
    assert report.skipped == {"task-online": "asks for the network (allow_internet = true)"}


def test_a_skip_policy_that_leaves_nothing_says_so_not_read_a_trials_file(
        make_task: MakeTask, tmp_path: Path) -> None:
    from termgrade.core.errors import OptionError
    from tests.support.task_dirs import DEFAULT_TOML

    online = make_task("task-online", toml=DEFAULT_TOML + "[environment]\n"
                       "allow_internet = true\n")
    with pytest.raises(OptionError) as caught:
        grade_model([online.parent], AGENT, tmp_path / "out", k=1, workers=1,
                    progress=False, internet_tasks="skip", run=scripted(lambda job: True))
    said = str(caught.value)
    assert ("nothing to grade: all 1 task(s) were skipped: 1 task(s): asks for the network "
            "(allow_internet = true) (task-online)") in said
    assert "exception_message" not in said
    assert not (tmp_path / "out" / TRIALS_FILE).exists()
