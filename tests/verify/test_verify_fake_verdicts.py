"""``verify`` without Docker: the verdict each combination of trial outcomes gets.

The trial runner and the image builder are test stand-ins (tests/support/fake_trials.py)
that answer with scripted outcomes; what is under test is everything around them: the
verdict, the record's fields, attacks. That the real grader produces these outcomes is the
Docker tests' job (tests/verify/test_verify_verdicts.py and others). The journal, resume and the
CLI are in tests/verify/test_verify_fake_journal.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.attacks import Attack
from termgrade.sandbox.errors import SandboxError
from termgrade.verify import Journal, Verdict, VerifyRecord, verify_task, verify_tasks
from tests.support.fake_trials import (
    ATTACKS,
    FAIL,
    PASS,
    SKIPPED,
    FakeImages,
    Script,
    ScriptedTrials,
    Step,
    journal_ids,
    scored_failure,
    tampered,
    unscored,
)
from tests.support.task_dirs import MakeTask


def run_one(make_task: MakeTask, script: Script, *, repeat: int = 2,
            attacks: list[Attack] | None = None,
            images: FakeImages | None = None) -> tuple[VerifyRecord, ScriptedTrials]:
    root = make_task("t")
    trials = ScriptedTrials(script)
    record = verify_task(root, repeat=repeat, attacks=attacks, run_trial=trials,
                         build_image=images or FakeImages())
    return record, trials


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


def test_unsatisfiable_with_the_finding_when_the_oracle_tampers(make_task: MakeTask) -> None:
    """A reference whose changes are a finding: no agent can pass by them (unsatisfiable,
    the finding its reason), and the verifier did not crash (never error)."""
    record, _ = run_one(make_task, {"t": {"oracle": [PASS, tampered("/usr/bin/python3")],
                                          "nop": FAIL}})
    assert record.verdict is Verdict.UNSATISFIABLE, record.error
    assert record.tampered == ["M /usr/bin/python3"]
    assert "integrity findings" in (record.error or "")
    assert "M /usr/bin/python3" in (record.error or "")
    assert "scored 0" not in (record.error or "")


def test_a_crash_beside_a_tampering_oracle_is_still_an_error(make_task: MakeTask) -> None:
    crash = scored_failure("tests/test.sh: wrote no reward")
    record, _ = run_one(make_task, {"t": {"oracle": tampered("/usr/bin/python3"),
                                          "nop": crash}}, repeat=1)
    assert record.verdict is Verdict.ERROR
    assert "wrote no reward" in (record.error or "")


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
