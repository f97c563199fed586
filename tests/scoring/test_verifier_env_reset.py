"""A test.sh that runs pytest with the grader's environment removed is unattested, said.

``env -i`` (``env -``, ``env -u PYTHONDONTWRITEBYTECODE``, ``exec env -i``) drops the
grader's ``PYTHONPATH`` and ``PYTEST_PLUGINS``: that pytest loads neither the grader's
sitecustomize nor its plugin, so no attested session covers it, and without
``PYTHONDONTWRITEBYTECODE`` it writes ``/tests/__pycache__``. Fairness round 9 (N2) found
every trial of such a task scored 0, the oracle's too, blamed on agent code. Now the
static check calls the task unattested (graded by test.sh's own reward, ``attested``
false); where it does not see the reset, ``verify``'s reference run does (no session
keyed where one was expected) and records the task unattested with the reason. With the
static check patched out and no such record, the 0 comes back.
"""

from __future__ import annotations

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.audit import attestable as audit_attestable
from termgrade.audit.attestable import attestability
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.outcome import RunOutcome
from termgrade.scoring.trial import run_task
from termgrade.scoring.verifier.attestable import ATTESTED, Attestability
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.task import Task, load_task
from termgrade.verify import runner
from termgrade.verify.runner import unseen_session, verify_task
from termgrade.verify.verdict import Verdict
from tests.support.task_dirs import MakeTask

PY = "/opt/venv/bin/python"
T = "/tests/test_outputs.py"
PATH = "PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
REWARD = ("[ $? -eq 0 ] && echo 1 > /logs/verifier/reward.txt "
          "|| echo 0 > /logs/verifier/reward.txt\n")


def _test_sh(line: str) -> str:
    return f"#!/bin/bash\nmkdir -p /logs/verifier\n{line}\n{REWARD}"


RESET = {
    "env-i": f"env -i {PATH} HOME=/root bash -c '{PY} -m pytest -q {T}'",
    "env-i-keep": f"env -i PYTHONDONTWRITEBYTECODE=1 {PATH} HOME=/root bash -c "
                  f"'{PY} -m pytest -q {T}'",
    "env-dash": f"env - {PATH} {PY} -m pytest -q -p no:cacheprovider {T}",
    "env-u-bytecode": f"env -u PYTHONDONTWRITEBYTECODE {PY} -m pytest -q {T}",
}
KEPT = f"env {PATH} {PY} -m pytest -q -p no:cacheprovider {T}"
"""``env`` that only sets variables: the grader's environment is kept, the task attested."""


def _task(make_task: MakeTask, name: str, line: str) -> Task:
    return load_task(make_task(f"reset-{name}", test_sh=_test_sh(line)))


def _grade(task: Task, agent: AgentName, attestable: Attestability) -> RunOutcome:
    return run_task(task, build_task_image(task).tag, agent, attestable=attestable)


def _why(outcome: RunOutcome) -> object:
    return outcome.error, outcome.failure, outcome.verifier and outcome.verifier.output[-2000:]


@pytest.mark.docker
@pytest.mark.parametrize("name", list(RESET))
def test_an_honest_reset_verifier_scores_one_unattested(make_task: MakeTask,
                                                        name: str) -> None:
    task = _task(make_task, name, RESET[name])
    found = attestability(task)
    assert not found.attested and found.reason and "verifier_attested" in found.reason
    assert "removes the grader's environment" in found.reason
    outcome = _grade(task, AgentName.ORACLE, found)
    assert outcome.reward == 1.0 and outcome.attested is False, _why(outcome)
    nop = _grade(task, AgentName.NOP, found)
    assert nop.error is None and nop.reward == 0.0, _why(nop)


@pytest.mark.docker
def test_env_that_keeps_the_graders_environment_stays_attested(make_task: MakeTask) -> None:
    task = _task(make_task, "kept", KEPT)
    assert attestability(task) == ATTESTED
    outcome = _grade(task, AgentName.ORACLE, ATTESTED)
    assert outcome.reward == 1.0 and outcome.attested is True, _why(outcome)
    assert outcome.verifier is not None and outcome.verifier.outcomes


@pytest.mark.docker
@pytest.mark.parametrize("name", ["env-i", "env-i-keep"])
def test_without_the_static_check_the_zero_comes_back(make_task: MakeTask, name: str) -> None:
    """Control: graded as attestable (the check patched out, no record), the honest
    solution scores 0 for the grader's blind spot (the bug this file pins)."""
    outcome = _grade(_task(make_task, name, RESET[name]), AgentName.ORACLE, ATTESTED)
    assert outcome.reward == 0.0 and outcome.failure, _why(outcome)
    assert outcome.failure.startswith("attestation:")
    assert unseen_session(outcome) is not None, outcome.failure


def _static_check_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(audit_attestable.STATIC_CHECKS, "verifier_attested",
                        lambda doc, options: None)


@pytest.mark.docker
def test_verify_records_a_reset_the_static_check_missed(make_task: MakeTask,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The static check patched out: verify's reference run sees no attested session
    where one was expected, grades the runs unattested and records why; trials are then
    graded by test.sh's reward, said."""
    _static_check_off(monkeypatch)
    task = _task(make_task, "env-i", RESET["env-i"])
    assert attestability(task) == ATTESTED
    record = verify_task(task.paths.root, repeat=1)
    assert record.verdict is Verdict.VERIFIED, (record.error, record.tampered)
    reference = record.reference
    assert reference is not None and reference.attested is False
    assert reference.attest_reason and "saw no attested pytest session" in \
        reference.attest_reason
    judged = attestability(task)
    assert not judged.attested and judged.reason == reference.attest_reason
    outcome = _grade(task, AgentName.ORACLE, judged)
    assert outcome.reward == 1.0 and outcome.attested is False, _why(outcome)


@pytest.mark.docker
def test_verify_without_the_confirmation_reports_error(make_task: MakeTask,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: both the static check and the reference run's confirmation patched out,
    verify says error again (every run 0)."""
    _static_check_off(monkeypatch)
    monkeypatch.setattr(runner, "_unseen_reason", lambda runs: None)
    task = _task(make_task, "env-i-keep", RESET["env-i-keep"])
    record = verify_task(task.paths.root, repeat=1)
    assert record.verdict is Verdict.ERROR and record.reference is None
    assert record.error and "no attested pytest session" in record.error


def _outcome(failure: str | None, *, tampered: list[str] | None = None,
             outcomes: dict[str, str] | None = None, raw: float | None = 1.0) -> RunOutcome:
    verifier = VerifierResult(reward=0.0, failure=failure, raw_reward=raw,
                              tampered=tampered or [], outcomes=outcomes or {})
    return RunOutcome(agent="oracle", verifier=verifier)


PYC = ("agent code ran inside the verifier's pytest process (verifier-changed: "
       "/tests/__pycache__/test_outputs.cpython-311-pytest-8.4.2.pyc: not a member of an "
       "archive the task ships in tests/ (pid 0))")
NONE = ("attestation: no attested pytest session ran the tests (the verifier must run "
        "pytest from test.sh, which loads TermGrade's plugin)")


def test_unseen_session_is_a_run_with_no_session_and_nothing_else() -> None:
    assert unseen_session(_outcome(NONE)) is not None
    assert unseen_session(_outcome("attestation: " + PYC, tampered=[PYC])) is not None
    # a key refused: the plugin loaded, so the environment was not the cause
    assert unseen_session(_outcome(NONE + "; the broker refused a key to `x`: y")) is None
    # tests were attested, or test.sh wrote no reward, or anything else was found
    assert unseen_session(_outcome(NONE, outcomes={"t::a": "passed"})) is None
    assert unseen_session(_outcome(NONE, raw=None)) is None
    other = PYC.replace("__pycache__/test_outputs.cpython-311-pytest-8.4.2.pyc", "conftest.py")
    assert unseen_session(_outcome("attestation: " + other, tampered=[other])) is None
    assert unseen_session(_outcome("attestation: " + PYC, tampered=[PYC, "M /usr/bin/x"])) \
        is None
    assert unseen_session(_outcome("integrity findings: M /usr/bin/x",
                                   tampered=["M /usr/bin/x"])) is None
    assert unseen_session(RunOutcome(agent="oracle", verifier=None)) is None
