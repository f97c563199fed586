"""Regrading that pays only for what changed (``grade --reuse``), without containers.

The trial runner is the scripted stand-in of tests/grade/test_grade_runner.py; the Docker
test at the end of this file grades real tasks against a scripted endpoint.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.grade import TRIALS_FILE, TrialJob, TrialJournal, grade_model
from termgrade.grade.errors import ReuseError
from termgrade.grade.record import graded_record
from termgrade.grade.reuse import plan_reuse, scaffold_digest
from termgrade.records.trial import TrialRecord
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.task.digest import task_digest
from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution
from tests.support.task_dirs import MakeTask

AGENT = ModelAgent(Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None),
                   ScaffoldConfig())


class Counting:
    """A trial runner stand-in that passes every trial and remembers what it ran."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def __call__(self, job: TrialJob) -> TrialRecord:
        with self._lock:
            self.jobs.append((job.task_id, job.attempt))
        now = datetime.now(UTC)
        return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                             retry_index=job.retry_index, started_at=now, finished_at=now,
                             job_id=job.job_id,
                             outcome=RunOutcome(job.agent.name, VerifierResult(reward=1.0)))


@pytest.fixture
def tasks(make_task: MakeTask) -> Path:
    for name in ("task-a", "task-b", "task-c"):
        root = make_task(name)
    return root.parent


def _records(out: Path) -> list[TrialRecord]:
    return TrialJournal(out / TRIALS_FILE).load()


def test_every_trial_records_its_task_digest_and_scaffold(tasks: Path, tmp_path: Path) -> None:
    grade_model([tasks], AGENT, tmp_path / "run", k=2, workers=2, progress=False,
                run=Counting())
    records = _records(tmp_path / "run")
    assert len(records) == 6
    for record in records:
        assert record.task_digest == task_digest(tasks / record.task_id)
        assert record.scaffold_digest == scaffold_digest(AGENT)
        assert record.scaffold_config is not None and '"max_turns": 50' in record.scaffold_config
        assert (record.scaffold, record.scaffold_version) == ("bash-tool", "1")


def test_regrading_after_one_task_changed_reruns_only_that_task(tasks: Path,
                                                                tmp_path: Path) -> None:
    first = Counting()
    grade_model([tasks], AGENT, tmp_path / "run1", k=2, workers=2, progress=False, run=first)
    assert len(first.jobs) == 6
    (tasks / "task-b" / "instruction.md").write_text("Write hello to /app/out.txt, v2.\n")
    second = Counting()
    report = grade_model([tasks], AGENT, tmp_path / "run2", k=2, workers=2, progress=False,
                         run=second, reuse=tmp_path / "run1")
    assert sorted(second.jobs) == [("task-b", 0), ("task-b", 1)]
    assert (report.reused, report.reused_tasks, report.graded) == (4, 2, 2)
    assert report.rerun == {"task-b": "task files changed"}
    assert report.resumed == 0
    assert [(t.task_id, t.counted) for t in report.tasks] == [("task-a", 2), ("task-b", 2),
                                                              ("task-c", 2)]
    records = _records(tmp_path / "run2")
    assert len(records) == 6
    assert {r.task_digest for r in records if r.task_id == "task-b"} == \
        {task_digest(tasks / "task-b")}
    earlier = {r.trial_id: r for r in _records(tmp_path / "run1")}
    run2 = {r.job_id for r in records}  # reused trials join the new run, their ids kept
    assert len(run2) == 1 and run2 != {r.job_id for r in earlier.values()}
    assert [r.model_copy(update={"job_id": None}) for r in records if r.task_id != "task-b"] \
        == [earlier[r.trial_id].model_copy(update={"job_id": None})
            for r in records if r.task_id != "task-b"]
    # Nothing changed since: a third run reuses everything and grades nothing.
    third = Counting()
    report = grade_model([tasks], AGENT, tmp_path / "run3", k=2, workers=2, progress=False,
                         run=third, reuse=tmp_path / "run2")
    assert third.jobs == [] and (report.reused, report.graded) == (6, 0)


def test_a_changed_scaffold_or_model_reuses_nothing(tasks: Path, tmp_path: Path) -> None:
    grade_model([tasks], AGENT, tmp_path / "run1", k=2, workers=2, progress=False,
                run=Counting())
    longer = ModelAgent(AGENT.endpoint, ScaffoldConfig(max_turns=60))
    again = Counting()
    report = grade_model([tasks], longer, tmp_path / "run2", k=2, workers=2, progress=False,
                         run=again, reuse=tmp_path / "run1")
    assert len(again.jobs) == 6 and report.reused == 0
    assert set(report.rerun.values()) == {"scaffold configuration changed"}
    other = ModelAgent(Endpoint("http://127.0.0.1:9/v1", "other-model", api_key_env=None),
                       ScaffoldConfig())
    fresh = Counting()
    grade_model([tasks], other, tmp_path / "run3", k=2, workers=2, progress=False, run=fresh,
                reuse=tmp_path / "run1")
    assert len(fresh.jobs) == 6


def test_reuse_refuses_the_run_being_written(tasks: Path, tmp_path: Path) -> None:
    grade_model([tasks], AGENT, tmp_path / "run", k=1, progress=False, run=Counting())
    with pytest.raises(ReuseError, match="own output") as caught:
        grade_model([tasks], AGENT, tmp_path / "run", k=1, progress=False, run=Counting(),
                    reuse=tmp_path / "run")
    assert "rerun without --reuse" in str(caught.value)
    with pytest.raises(ReuseError, match=r"no trials\.jsonl"):
        grade_model([tasks], AGENT, tmp_path / "new", k=1, progress=False, run=Counting(),
                    reuse=tmp_path / "nowhere")


def _record(task: str, attempt: int, *, digest: str | None = "d1", scaffold: str | None = "s1",
            counted: bool = True, model: str = "m") -> TrialRecord:
    return TrialRecord(trial_id=f"{task}-{attempt}-{counted}", task_id=task, model=model,
                       scaffold="bash-tool", attempt=attempt, reward=1.0 if counted else None,
                       passed=counted, counted=counted, source="termgrade grade",
                       task_digest=digest, scaffold_digest=scaffold)


def test_the_reuse_decision() -> None:
    earlier = [
        _record("a", 0), _record("a", 1), _record("a", 2),  # attempt 2 is past k=2
        _record("a", 0, counted=False),                     # a loss is never copied
        _record("b", 0, digest="old"),                      # task changed
        _record("c", 0, digest=None, scaffold=None),        # written before digests
        _record("d", 0, scaffold="s0"),                     # scaffold changed
        _record("e", 0, model="other"),                     # another model's
        _record("f", 0),                                    # a task not graded now
    ]
    plan = plan_reuse(earlier, model="m", scaffold="bash-tool", scaffold_digest="s1",
                      task_digests={t: "d1" for t in "abcde"}, k_max=2)
    assert [(r.task_id, r.attempt) for r in plan.records] == [("a", 0), ("a", 1)]
    assert plan.tasks == {"a"}
    assert plan.changed == {"b": "task files changed", "c": "no digests recorded",
                            "d": "scaffold configuration changed"}


@pytest.mark.docker
@pytest.mark.slow
def test_a_real_regrade_reruns_only_the_changed_tasks_trials(make_task: MakeTask,
                                                            tmp_path: Path) -> None:
    """Two tasks, k=2, graded through the CLI against a scripted endpoint in real
    containers; one task's instruction changes; the regrade with --reuse sends the
    endpoint only that task's episodes and runs only its trials."""
    for name in ("reuse-a", "reuse-b"):
        root = make_task(name)
    tasks = root.parent
    env = {**os.environ, "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this checkout's code

    def grade(out: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "termgrade", "grade", str(tasks), "--model",
             "scripted-tool-stand-in", "--base-url", url, "-k", "2", "-o", str(out), "-w", "2",
             *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)

    def episodes(llm: ScriptedToolEndpoint, marker: str) -> int:
        """Requests of trials whose instruction holds ``marker`` (the probe's are not)."""
        return sum(1 for body in llm.requests
                   if any(marker in str(m.get("content") or "") for m in body["messages"]
                          if m.get("role") == "user"))

    solve = "echo hello > /app/out.txt\n"
    with ScriptedToolEndpoint(replay_solution(solve)) as llm:
        first = grade(tmp_path / "run1", llm.url)
        assert first.returncode == 0, first.stdout + first.stderr
        assert episodes(llm, "Write hello") == 4 * 2  # 4 trials, 2 turns each
    earlier = {r.trial_id: r for r in _records(tmp_path / "run1")}
    assert len(earlier) == 4 and all(r.passed for r in earlier.values())
    (tasks / "reuse-b" / "instruction.md").write_text("Write hello to /app/out.txt (v2).\n")
    with ScriptedToolEndpoint(replay_solution(solve)) as llm:
        began = datetime.now(UTC)
        second = grade(tmp_path / "run2", llm.url, "--reuse", str(tmp_path / "run1"))
        output = second.stdout + second.stderr
        assert second.returncode == 0, output
        assert episodes(llm, "Write hello") == 2 * 2  # reuse-b's 2 trials only
        assert episodes(llm, "(v2)") == 2 * 2
    assert "reused 2 trial(s) of 1 task(s), graded 2" in output
    assert "regraded reuse-b: task files changed" in output
    records = _records(tmp_path / "run2")
    assert len(records) == 4 and all(r.passed for r in records)
    new = [r for r in records if r.started_at is not None and r.started_at >= began]
    assert sorted((r.task_id, r.attempt) for r in new) == [("reuse-b", 0), ("reuse-b", 1)]
    assert [r.model_copy(update={"job_id": None}) for r in records if r.task_id == "reuse-a"] \
        == [earlier[r.trial_id].model_copy(update={"job_id": None})
            for r in records if r.task_id == "reuse-a"]  # reused: joined run2, ids kept
    # Labelling the old reuse-b trials with the new ones is refused (trial ids are per
    # run folder, so the old ones are renamed to pass both).
    old = tmp_path / "old-b.jsonl"
    old.write_text("".join(
        r.model_copy(update={"trial_id": r.trial_id + "-old"}).model_dump_json() + "\n"
        for r in earlier.values() if r.task_id == "reuse-b"))
    labels = subprocess.run([sys.executable, "-m", "termgrade", "labels", str(old),
                             str(tmp_path / "run2" / TRIALS_FILE), "-o",
                             str(tmp_path / "labels.jsonl")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert labels.returncode == 1, labels.stdout + labels.stderr
    assert "reuse-b" in labels.stderr and "--mix-digests" in labels.stderr
