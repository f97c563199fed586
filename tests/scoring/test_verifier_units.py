"""Scoring pieces without containers: rewards, reports, tamper rules, output capping."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from termgrade.records.verdict import Outcome
from termgrade.sandbox import OutputCap
from termgrade.scoring import parse_reward
from termgrade.scoring.errors import VerifierError
from termgrade.scoring.verifier.verdict_parsers import (
    parse_ctrf,
    parse_junit,
    parse_pytest_summary,
)
from tests.support.task_dirs import MakeTask

TXT = PurePosixPath("/logs/verifier/reward.txt")
JSON = PurePosixPath("/logs/verifier/reward.json")


@pytest.mark.parametrize(("raw", "path", "value"), [
    (b"1\n", TXT, 1.0), (b" 0 ", TXT, 0.0), (b"0.5", TXT, 0.5),
    (b'{"reward": 1}', JSON, 1.0), (b'{"score": 0.25}', JSON, 0.25), (b"1", JSON, 1.0),
])
def test_parse_reward(raw: bytes, path: PurePosixPath, value: float) -> None:
    assert parse_reward(raw, path) == value


@pytest.mark.parametrize(("raw", "path", "needle"), [
    (b"", TXT, "empty"), (b"yes", TXT, "not a number"), (b"nan", TXT, "non-finite"),
    (b'{"a": 1, "b": 2}', JSON, "no numeric reward"), (b'{"reward": true}', JSON, "no numeric"),
    (b"inf", TXT, "non-finite"), (b'{"reward": "1"}', JSON, "no numeric"),
])
def test_parse_reward_rejects(raw: bytes, path: PurePosixPath, needle: str) -> None:
    with pytest.raises(VerifierError, match=needle):
        parse_reward(raw, path)


def test_junit_keeps_parametrize_ids_and_outcomes() -> None:
    xml = b"""<testsuites><testsuite>
      <testcase classname="t" name="test_a[1]"/>
      <testcase classname="t" name="test_a[2]"><failure message="x"/></testcase>
      <testcase classname="t" name="test_b"><skipped/></testcase>
      <testcase classname="t" name="test_c"><error message="boom"/></testcase>
    </testsuite></testsuites>"""
    verdicts = {v.name: v.outcome for v in parse_junit(xml)}
    assert verdicts == {"test_a[1]": Outcome.PASSED, "test_a[2]": Outcome.FAILED,
                        "test_b": Outcome.SKIPPED, "test_c": Outcome.ERROR}


def test_ctrf() -> None:
    doc = b'{"results": {"tests": [{"name": "t1", "status": "passed"},' \
          b' {"name": "t2", "status": "failed"}, {"name": "t3", "status": "pending"}]}}'
    assert [(v.name, v.outcome) for v in parse_ctrf(doc)] == [
        ("t1", Outcome.PASSED), ("t2", Outcome.FAILED), ("t3", Outcome.SKIPPED)]


def test_malformed_reports_raise_value_error() -> None:
    with pytest.raises(ValueError):
        parse_junit(b"<not xml")
    with pytest.raises((ValueError, KeyError)):
        parse_ctrf(b'{"results": {}}')


def test_pytest_summary_lines() -> None:
    text = "PASSED tests/test_x.py::test_one\nFAILED tests/test_x.py::test_two - assert 1\n"
    assert [(v.name, v.outcome) for v in parse_pytest_summary(text)] == [
        ("test_one", Outcome.PASSED), ("test_two", Outcome.FAILED)]


def test_output_cap_keeps_head_and_tail() -> None:
    cap = OutputCap(limit=20)
    for _ in range(1000):
        cap.feed(b"0123456789")
    text = cap.text()
    assert cap.total == 10_000
    assert text.startswith("0123456789") and text.endswith("0123456789")
    assert "9980 bytes of output dropped" in text
    assert len(cap.head) + len(cap.tail) == 20


def test_output_cap_small_output_is_whole_and_decodes_bad_bytes() -> None:
    cap = OutputCap(limit=100)
    cap.feed(b"ok \xff\xfe")
    assert cap.text() == "ok \ufffd\ufffd"


def test_each_trial_stages_its_plugin_under_a_fresh_name(make_task: MakeTask) -> None:
    import shutil

    from termgrade.scoring.pair.containers import stage_grader
    from termgrade.task import load_task

    task = load_task(make_task())
    (one, first), (two, second) = stage_grader(task), stage_grader(task)
    try:
        assert first != second and first.startswith("termgrade_attest_")
        for where, module in ((one, first), (two, second)):
            assert (where / "grader" / f"{module}.py").is_file()
            assert (where / "grader" / "termgrade_broker.py").is_file()
            assert (where / "grader" / "tests-source" / "test.sh").is_file()
    finally:
        shutil.rmtree(one), shutil.rmtree(two)


def test_no_secret_appears_in_the_verifier_command_or_environment(make_task: MakeTask) -> None:
    from termgrade.scoring.verifier.attestation import end_marker, new_key
    from termgrade.scoring.verifier.command import verifier_command, verifier_env
    from termgrade.task import load_task

    task = load_task(make_task())
    key = new_key()
    shown = " ".join(verifier_command(task, "/usr/bin/python3.11")) + " ".join(
        f"{k}={v}" for k, v in verifier_env(task, "termgrade_attest_x").items())
    assert key.hex() not in shown and end_marker(key).decode() not in shown
    assert "TERMGRADE-END" not in shown
