"""Attestability, the task's property: from the reference record and the static checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.audit.attestable import attestability
from termgrade.scoring.reference import ReferenceRecord, save_reference
from termgrade.scoring.verifier.attestable import ATTESTED, Attestability, from_reference
from termgrade.task import load_task
from termgrade.task.digest import task_digest
from tests.support.task_dirs import MakeTask

BASH_ONLY = ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\n"
             "grep -qx hello /app/out.txt && echo 1 > /logs/verifier/reward.txt "
             "|| echo 0 > /logs/verifier/reward.txt\n")
UNITTEST = ("#!/usr/bin/env bash\ncd /tests\npython3 -m unittest discover -s /tests\n"
            "echo $? > /logs/verifier/reward.txt\n")
AGENT_PROGRAM = ("#!/usr/bin/env bash\nbash /app/build.sh\n"
                 "python -m pytest /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt\n")
AGENT_CODE_TESTS = ("import sys\nsys.path.insert(0, '/app')\nimport solution\n\n\n"
                    "def test_it():\n    assert solution.answer() == 42\n")


@pytest.fixture(autouse=True)
def _references(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "references"
    monkeypatch.setenv("TERMGRADE_REFERENCE_DIR", str(where))
    return where


def test_a_pytest_verifier_is_attestable(make_task: MakeTask) -> None:
    assert attestability(load_task(make_task())) == ATTESTED


@pytest.mark.parametrize(("pieces", "check", "words"), [
    ({"test_sh": BASH_ONLY}, "verifier_attested", "runs no pytest"),
    ({"test_sh": UNITTEST}, "verifier_attested", "runs no pytest"),
    ({"test_sh": AGENT_PROGRAM}, "verifier_attested", "outside pytest"),
    ({"tests": AGENT_CODE_TESTS}, "agent_code_isolated", "inside pytest"),
])
def test_a_verifier_that_decides_outside_an_attested_session_is_unattestable(
        make_task: MakeTask, pieces: dict[str, str], check: str, words: str) -> None:
    found = attestability(load_task(make_task(**pieces)))
    assert not found.attested
    assert found.reason is not None and found.reason.startswith(check + ":")
    assert words in found.reason


def test_the_reference_record_makes_a_task_unattestable(make_task: MakeTask) -> None:
    task = load_task(make_task())
    digest = task_digest(task.paths.root)
    save_reference(ReferenceRecord(task_digest=digest, attested=False,
                                   attest_reason="the reference's tests ran in no session"))
    assert attestability(task) == Attestability(False, "the reference's tests ran in no session")
    # An attested reference does not hide what the static checks find.
    bash = load_task(make_task("bash-task", test_sh=BASH_ONLY))
    recorded = ReferenceRecord(task_digest=task_digest(bash.paths.root))
    assert not attestability(bash, recorded).attested


def test_without_a_reason_a_task_is_attestable() -> None:
    """The strict default: nothing recorded, nothing unattested."""
    assert from_reference(None) == ATTESTED
    assert from_reference(ReferenceRecord(task_digest="x")) == ATTESTED
    assert not from_reference(ReferenceRecord(task_digest="x", attested=False)).attested
    with pytest.raises(ValueError, match="needs the reason"):
        Attestability(False)
    with pytest.raises(ValueError, match="no reason"):
        Attestability(True, "why")
