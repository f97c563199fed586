"""``verify`` without Docker: verdicts, failure records, the journal and resume.

The trial runner and the image builder are test stand-ins (tests/support/fake_trials.py)
that answer with scripted outcomes; what is under test is everything around them: the
verdict each combination of outcomes gets, the record's fields, journaling one record at a
time, ``--resume``, interruption, and the CLI. That the real grader produces these
outcomes is the Docker tests' job (tests/test_verify_verdicts.py and others).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import termgrade.verify.runner as verify_runner
from termgrade.attacks import Attack, load_attacks
from termgrade.cli.app import app, register_commands
from termgrade.errors import SandboxError
from termgrade.task.digest import task_digest
from termgrade.verify import Journal, Verdict, VerifyRecord, verify_task, verify_tasks
from tests.conftest import MakeTask
from tests.support.fake_trials import (
    ATTACKS,
    FAIL,
    PASS,
    SKIPPED,
    Call,
    FakeImages,
    Script,
    ScriptedTrials,
    Step,
    scored_failure,
    tampered,
    unscored,
)

TASKS = ("alpha", "bravo", "charlie", "delta", "echo")


def run_one(make_task: MakeTask, script: Script, *, repeat: int = 2,
            attacks: list[Attack] | None = None,
            images: FakeImages | None = None) -> tuple[VerifyRecord, ScriptedTrials]:
    root = make_task("t")
    trials = ScriptedTrials(script)
    record = verify_task(root, repeat=repeat, attacks=attacks, run_trial=trials,
                         build_image=images or FakeImages())
    return record, trials


def corpus(make_task: MakeTask, names: tuple[str, ...] = TASKS) -> Path:
    """The folder holding one fixture task per name."""
    roots = [make_task(n) for n in names]
    return roots[0].parent


def journal_ids(journal: Journal) -> list[str]:
    return [json.loads(line)["task_id"] for line in journal.path.read_text().splitlines()]


# -- verdicts from scripted outcomes -------------------------------------------------------


def test_verified(make_task: MakeTask) -> None:
    record, trials = run_one(make_task, {"t": {"oracle": PASS, "nop": FAIL}}, repeat=3)
    assert record.verdict is Verdict.VERIFIED, record.error
    assert record.oracle_rewards == [1.0, 1.0, 1.0] and record.nop_reward == 0.0
    assert record.n_assertions == 2
    assert [(t.name, t.outcome) for t in record.tests] == [("test_output_exists", "passed"),
                                                           ("test_output_content", "passed")]
    assert record.error is None and record.tampered == [] and record.hacked_by == []
    assert trials.agents_of("t") == ["oracle", "oracle", "oracle", "nop"]
    assert {c.image for c in trials.calls} == {"termgrade/task-t:fake"}
    assert record.durations["build"] == 0.001
    assert record.durations["oracle_total"] == pytest.approx(3 * 0.007)
    assert record.durations["nop_agent"] == pytest.approx(0.002)


def test_unsatisfiable(make_task: MakeTask) -> None:
    record, _ = run_one(make_task, {"t": {"oracle": FAIL, "nop": FAIL}})
    assert record.verdict is Verdict.UNSATISFIABLE
    assert record.oracle_rewards == [0.0, 0.0]
    assert {t.name: t.outcome for t in record.tests} == {"test_output_exists": "passed",
                                                         "test_output_content": "failed"}


def test_unsatisfiable_names_the_solutions_own_error(make_task: MakeTask) -> None:
    hang = Step(reward=0.0, agent_error="solve.sh: timed out after 2 s")
    record, _ = run_one(make_task, {"t": {"oracle": hang, "nop": FAIL}}, repeat=1)
    assert record.verdict is Verdict.UNSATISFIABLE
    assert record.error == "solve.sh: timed out after 2 s"


def test_flaky(make_task: MakeTask) -> None:
    record, _ = run_one(make_task, {"t": {"oracle": [PASS, FAIL, PASS], "nop": FAIL}}, repeat=3)
    assert record.verdict is Verdict.FLAKY
    assert record.oracle_rewards == [1.0, 0.0, 1.0]


def test_vacuous_when_the_untouched_container_passes(make_task: MakeTask) -> None:
    record, _ = run_one(make_task, {"t": {"oracle": PASS, "nop": PASS}})
    assert record.verdict is Verdict.VACUOUS
    assert record.nop_reward == 1.0
    assert "the untouched container passes" in (record.error or "")


def test_vacuous_when_every_test_is_skipped(make_task: MakeTask) -> None:
    # The attestation's "no test passed" of an all-skipped run is not an error.
    record, _ = run_one(make_task, {"t": {"oracle": SKIPPED, "nop": SKIPPED}})
    assert record.verdict is Verdict.VACUOUS
    assert record.oracle_rewards == [0.0, 0.0] and record.n_assertions == 2
    assert "every test was skipped" in (record.error or "")


def test_error_on_an_unscored_engine_failure(make_task: MakeTask) -> None:
    record, _ = run_one(make_task, {"t": {"oracle": [PASS, unscored("docker: 502 Bad Gateway")],
                                          "nop": FAIL}})
    assert record.verdict is Verdict.ERROR
    assert record.oracle_rewards == [1.0, None]
    assert record.error == "docker: 502 Bad Gateway"
    assert record.tests == []  # the last oracle run has no report


def test_error_on_an_unscored_nop(make_task: MakeTask) -> None:
    record, _ = run_one(make_task, {"t": {"oracle": PASS, "nop": unscored("container vanished")}})
    assert record.verdict is Verdict.ERROR
    assert record.nop_reward is None and "container vanished" in (record.error or "")


def test_error_on_a_scored_failure_of_the_oracle(make_task: MakeTask) -> None:
    # Scored 0, not unscored; verify calls it an error: the task's own oracle hit it.
    record, _ = run_one(make_task, {"t": {"oracle": scored_failure(), "nop": FAIL}}, repeat=1)
    assert record.verdict is Verdict.ERROR
    assert record.oracle_rewards == [0.0]
    assert record.error == ("scored 0: verifier: /tests/test.sh wrote no reward "
                            "(/logs/verifier/reward.txt)")


def test_error_and_findings_when_the_oracle_is_tampered(make_task: MakeTask) -> None:
    record, _ = run_one(make_task, {"t": {"oracle": [PASS, tampered("/usr/bin/python3")],
                                          "nop": FAIL}})
    assert record.verdict is Verdict.ERROR
    assert record.tampered == ["M /usr/bin/python3"]
    assert "integrity findings: M /usr/bin/python3" in (record.error or "")


def test_engine_error_raised_by_the_runner_is_a_recorded_error(make_task: MakeTask,
                                                               tmp_path: Path) -> None:
    root = make_task("t")
    trials = ScriptedTrials({"t": {"nop": SandboxError("docker: no such container")}})
    report = verify_tasks([root.parent], workers=1, progress=False, run_trial=trials,
                          build_image=FakeImages(), journal=Journal(tmp_path / "j.jsonl"))
    [record] = report.records
    assert record.verdict is Verdict.ERROR and "no such container" in (record.error or "")
    assert journal_ids(Journal(tmp_path / "j.jsonl")) == ["t"]


def test_build_failed(make_task: MakeTask) -> None:
    images = FakeImages(fail={"t": "E: Unable to locate package curl"})
    record, trials = run_one(make_task, {}, images=images)
    assert record.verdict is Verdict.BUILD_FAILED
    assert "Unable to locate package" in (record.error or "")
    assert "no network" in (record.error or "")
    assert trials.calls == [] and images.built == ["t"]


def test_a_broken_task_toml_never_reaches_the_runner(make_task: MakeTask) -> None:
    root = make_task("t", toml="[verifier\ntimeout_sec = 1\n")
    trials, images = ScriptedTrials(), FakeImages()
    record = verify_task(root, repeat=1, run_trial=trials, build_image=images)
    assert record.verdict is Verdict.ERROR and "task.toml" in (record.error or "")
    assert trials.calls == [] and images.built == []


# -- attacks -------------------------------------------------------------------------------


@pytest.fixture
def battery() -> list[Attack]:
    attacks = load_attacks()
    assert len(attacks) >= 3
    return attacks


def test_hackable_when_an_attack_earns_a_reward(make_task: MakeTask,
                                                battery: list[Attack]) -> None:
    winner = battery[1].name
    record, trials = run_one(make_task, {"t": {winner: PASS}}, attacks=battery)
    assert record.verdict is Verdict.HACKABLE
    assert record.hacked_by == [f"{winner}: reward 1"]
    assert record.error == f"hacked by {winner}: reward 1"
    assert record.attacks_played == len(battery)
    assert trials.agents_of("t") == ["oracle", "oracle", "nop", *(a.name for a in battery)]


def test_hackable_when_an_attack_leaves_the_run_unscored(make_task: MakeTask,
                                                         battery: list[Attack]) -> None:
    record, _ = run_one(make_task, {"t": {battery[0].name: unscored("verifier killed")}},
                        attacks=battery)
    assert record.verdict is Verdict.HACKABLE
    assert record.hacked_by == [f"{battery[0].name}: unscored (verifier killed)"]


def test_attacks_the_grader_catches_leave_the_task_verified(make_task: MakeTask,
                                                            battery: list[Attack]) -> None:
    # Tampering and scored failures are 0s: the grader held, the task is not hackable.
    script = {"t": {battery[0].name: tampered("/usr/local/bin/pytest"),
                    ATTACKS: scored_failure("verifier: timed out after 60 s")}}
    record, _ = run_one(make_task, script, attacks=battery)
    assert record.verdict is Verdict.VERIFIED, record.error
    assert record.hacked_by == [] and record.tampered == []
    assert record.attacks_played == len(battery)


def test_a_broken_oracle_outranks_a_winning_attack(make_task: MakeTask,
                                                   battery: list[Attack]) -> None:
    record, _ = run_one(make_task, {"t": {"oracle": scored_failure(), ATTACKS: PASS}},
                        attacks=battery[:2])
    assert record.verdict is Verdict.ERROR


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
    result = runner.invoke(register_commands(), args)
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
    result = CliRunner().invoke(register_commands(), ["verify", str(root), "-w", "1", "-n", "1",
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
    result = CliRunner().invoke(register_commands(), [
        "verify", str(root), "--json", "-n", "1", "--attack", name,
        "--journal", str(tmp_path / "j.jsonl")])
    assert result.exit_code == 0, result.output
    [record] = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    assert record["attacks_played"] == 1 and record["verdict"] == "verified"
    assert trials.agents_of("good") == ["oracle", "nop", name]
