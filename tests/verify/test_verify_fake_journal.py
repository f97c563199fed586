"""``verify`` without Docker: journaling one record at a time, ``--resume``,
interruption, parallel workers and the CLI, with the scripted trial runner of
tests/support/fake_trials.py (see tests/verify/test_verify_fake_verdicts.py for verdicts).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import termgrade.verify.runner as verify_runner
from termgrade.attacks import Attack
from termgrade.cli.app import app
from termgrade.task.digest import task_digest
from termgrade.verify import Journal, Verdict, verify_tasks
from tests.support.fake_trials import (
    FAIL,
    PASS,
    Call,
    FakeImages,
    ScriptedTrials,
    journal_ids,
)
from tests.support.task_dirs import MakeTask

TASKS = ("alpha", "bravo", "charlie", "delta", "echo")


def corpus(make_task: MakeTask, names: tuple[str, ...] = TASKS) -> Path:
    """The folder holding one fixture task per name."""
    roots = [make_task(n) for n in names]
    return roots[0].parent


# -- the journal, resume, interruption -----------------------------------------------------


def test_records_are_journaled_one_by_one(make_task: MakeTask, tmp_path: Path) -> None:
    """While task k runs, the records of tasks 1..k-1 are already in the journal (the
    main thread appends a record as its task finishes; the worker may start the next
    task a moment earlier, so the check waits up to 10 s for it)."""
    root = corpus(make_task)
    journal = Journal(tmp_path / "j.jsonl")
    seen: dict[str, list[str]] = {}

    def look(call: Call) -> None:
        if call.task_id in seen:
            return
        want = list(TASKS[:TASKS.index(call.task_id)])
        deadline = time.monotonic() + 10
        ids: list[str] = []
        while time.monotonic() < deadline:
            ids = list(journal.load())  # tolerates a line being written right now
            if ids == want:
                break
            time.sleep(0.005)
        seen[call.task_id] = ids

    trials = ScriptedTrials({"charlie": {"oracle": FAIL}}, on_call=look)
    report = verify_tasks([root], repeat=1, workers=1, journal=journal, progress=False,
                          run_trial=trials, build_image=FakeImages())
    assert seen == {t: list(TASKS[:i]) for i, t in enumerate(TASKS)}
    assert journal_ids(journal) == list(TASKS)
    assert [r.verdict for r in report.records] == [Verdict.VERIFIED, Verdict.VERIFIED,
                                                   Verdict.UNSATISFIABLE, Verdict.VERIFIED,
                                                   Verdict.VERIFIED]
    assert journal.load() == {r.task_id: r for r in report.records}
    assert report.funnel() == {"candidates": 5, "kept": 4, "dropped:unsatisfiable": 1}


def test_a_new_run_without_resume_starts_a_fresh_journal(make_task: MakeTask,
                                                         tmp_path: Path) -> None:
    root = corpus(make_task, TASKS[:2])
    journal = Journal(tmp_path / "j.jsonl")
    for _ in range(2):
        trials = ScriptedTrials()
        verify_tasks([root], repeat=1, journal=journal, progress=False, run_trial=trials,
                     build_image=FakeImages())
        assert sorted(trials.tasks_run()) == list(TASKS[:2])
    assert sorted(journal_ids(journal)) == list(TASKS[:2])  # the second run's records only


def test_resume_skips_unchanged_tasks_and_reruns_a_changed_one(make_task: MakeTask,
                                                                tmp_path: Path) -> None:
    root = corpus(make_task)
    journal = Journal(tmp_path / "j.jsonl")
    first = verify_tasks([root], repeat=1, journal=journal, progress=False,
                         run_trial=ScriptedTrials(), build_image=FakeImages())
    before = {r.task_id: r.task_digest for r in first.records}

    # Nothing changed: nothing runs.
    idle = ScriptedTrials()
    again = verify_tasks([root], repeat=1, journal=journal, resume=True, progress=False,
                         run_trial=idle, build_image=FakeImages())
    assert idle.calls == [] and again.resumed == 5
    assert again.records == first.records

    # One file of bravo changes: its digest changes and only bravo runs, now failing.
    (root / "bravo" / "tests" / "test_outputs.py").write_text("def test_x():\n    assert 0\n")
    assert task_digest(root / "bravo") != before["bravo"]
    changed = ScriptedTrials({"bravo": {"oracle": FAIL}})
    report = verify_tasks([root], repeat=1, journal=journal, resume=True, progress=False,
                          run_trial=changed, build_image=FakeImages())
    assert changed.tasks_run() == ["bravo"] and report.resumed == 4
    by_id = {r.task_id: r for r in report.records}
    assert by_id["bravo"].verdict is Verdict.UNSATISFIABLE
    assert by_id["bravo"].task_digest == task_digest(root / "bravo") != before["bravo"]
    assert [r.task_id for r in report.records] == list(TASKS)
    ids = journal_ids(journal)  # the first run's five (in finishing order), then bravo's
    assert sorted(ids[:5]) == list(TASKS) and ids[5:] == ["bravo"]
    assert journal.load()["bravo"] == by_id["bravo"]


def test_resume_reruns_a_journal_without_attacks_when_attacks_are_asked(
        make_task: MakeTask, tmp_path: Path, battery: list[Attack]) -> None:
    root = corpus(make_task, TASKS[:3])
    journal = Journal(tmp_path / "j.jsonl")
    verify_tasks([root], repeat=1, journal=journal, progress=False,
                 run_trial=ScriptedTrials(), build_image=FakeImages())
    assert {r.attacks_played for r in journal.load().values()} == {0}

    attacked = ScriptedTrials({"bravo": {battery[0].name: PASS}})
    report = verify_tasks([root], repeat=1, journal=journal, resume=True, progress=False,
                          attacks=battery[:2], run_trial=attacked, build_image=FakeImages())
    assert report.resumed == 0 and sorted(attacked.tasks_run()) == list(TASKS[:3])
    assert {r.task_id: r.verdict for r in report.records} == {
        "alpha": Verdict.VERIFIED, "bravo": Verdict.HACKABLE, "charlie": Verdict.VERIFIED}
    assert {r.attacks_played for r in journal.load().values()} == {2}

    # The same battery again, or a smaller one: the attacked records stand.
    for attacks in (battery[:2], battery[:1], None):
        idle = ScriptedTrials()
        again = verify_tasks([root], repeat=1, journal=journal, resume=True, progress=False,
                             attacks=attacks, run_trial=idle, build_image=FakeImages())
        assert idle.calls == [] and again.resumed == 3
    # A bigger battery than the journal's: everything runs again.
    bigger = ScriptedTrials()
    verify_tasks([root], repeat=1, journal=journal, resume=True, progress=False,
                 attacks=battery[:3], run_trial=bigger, build_image=FakeImages())
    assert sorted(bigger.tasks_run()) == list(TASKS[:3])


def test_an_interrupted_run_keeps_finished_records_and_resumes(make_task: MakeTask,
                                                               tmp_path: Path) -> None:
    root = corpus(make_task)
    journal = Journal(tmp_path / "j.jsonl")
    # The 3rd task is interrupted in its second oracle run (the first one finished).
    trials = ScriptedTrials({"charlie": {"oracle": [PASS, KeyboardInterrupt()]}})
    with pytest.raises(KeyboardInterrupt):
        verify_tasks([root], repeat=2, workers=1, journal=journal, progress=False,
                     run_trial=trials, build_image=FakeImages())
    assert trials.tasks_run()[:3] == ["alpha", "bravo", "charlie"]
    lines = journal.path.read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["alpha", "bravo"]
    assert all(line.endswith("}") for line in lines)  # whole records only
    assert set(journal.load()) == {"alpha", "bravo"}

    resumed = ScriptedTrials()
    report = verify_tasks([root], repeat=2, workers=1, journal=journal, resume=True,
                          progress=False, run_trial=resumed, build_image=FakeImages())
    assert resumed.tasks_run() == ["charlie", "delta", "echo"]
    assert report.resumed == 2 and report.all_verified
    assert journal_ids(journal) == list(TASKS)


def test_parallel_workers_journal_every_record_once(make_task: MakeTask,
                                                    tmp_path: Path) -> None:
    names = tuple(f"task-{i:02d}" for i in range(12))
    root = corpus(make_task, names)
    journal = Journal(tmp_path / "j.jsonl")
    trials = ScriptedTrials({n: {"oracle": FAIL} for n in names[::3]})
    report = verify_tasks([root], repeat=2, workers=4, journal=journal, progress=False,
                          run_trial=trials, build_image=FakeImages())
    assert sorted(journal_ids(journal)) == list(names)
    assert [r.task_id for r in report.records] == list(names)
    assert report.funnel() == {"candidates": 12, "kept": 8, "dropped:unsatisfiable": 4}


# -- the CLI -------------------------------------------------------------------------------


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> tuple[ScriptedTrials, FakeImages]:
    """The CLI has no parameter for the seam: its defaults are swapped instead (verify_task
    looks ``run_task`` and ``build_task_image`` up in termgrade.verify.runner per call)."""
    trials, images = ScriptedTrials({"bad": {"oracle": FAIL}}), FakeImages()
    monkeypatch.setattr(verify_runner, "run_task", trials)
    monkeypatch.setattr(verify_runner, "build_task_image", images)
    return trials, images


def test_cli_verify_json_output_journal_and_exit_status(
        make_task: MakeTask, tmp_path: Path,
        fake_engine: tuple[ScriptedTrials, FakeImages]) -> None:
    make_task("good")
    root = make_task("bad").parent
    out, journal = tmp_path / "records.jsonl", tmp_path / "j.jsonl"
    runner = CliRunner()
    args = ["verify", str(root), "--json", "-n", "1", "-o", str(out), "--journal", str(journal)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert {r["task_id"]: r["verdict"] for r in lines} == {"bad": "unsatisfiable",
                                                            "good": "verified"}
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == ["bad",
                                                                                      "good"]
    assert sorted(journal_ids(Journal(journal))) == ["bad", "good"]
    assert "unsatisfiable 1" in result.output
    trials, _ = fake_engine
    assert sorted(trials.tasks_run()) == ["bad", "good"]

    trials.calls.clear()
    resumed = runner.invoke(app, [*args, "--resume"])
    assert resumed.exit_code == 1 and trials.calls == []
    assert "2 record(s) resumed from the journal" in resumed.output


def test_cli_verify_interrupted_exits_130_and_keeps_the_journal(
        make_task: MakeTask, tmp_path: Path,
        fake_engine: tuple[ScriptedTrials, FakeImages], monkeypatch: pytest.MonkeyPatch) -> None:
    root = corpus(make_task, TASKS[:3])
    trials = ScriptedTrials({"charlie": {"nop": KeyboardInterrupt()}})
    monkeypatch.setattr(verify_runner, "run_task", trials)
    journal = tmp_path / "j.jsonl"
    result = CliRunner().invoke(app, ["verify", str(root), "-w", "1", "-n", "1",
                                      "--journal", str(journal)])
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.output
    assert journal_ids(Journal(journal)) == ["alpha", "bravo"]


def test_cli_verify_attacks_reach_the_runner(make_task: MakeTask, tmp_path: Path,
                                             fake_engine: tuple[ScriptedTrials, FakeImages],
                                             battery: list[Attack]) -> None:
    root = make_task("good")
    trials, _ = fake_engine
    name = battery[0].name
    result = CliRunner().invoke(app, [
        "verify", str(root), "--json", "-n", "1", "--attack", name,
        "--journal", str(tmp_path / "j.jsonl")])
    assert result.exit_code == 0, result.output
    [record] = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    assert record["attacks_played"] == 1 and record["verdict"] == "verified"
    assert trials.agents_of("good") == ["oracle", "nop", name]
