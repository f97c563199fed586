"""Unattested tasks: a verifier with no pytest session is graded by its own reward.

A bash check writing ``reward.txt`` and a ``python -m unittest`` run are honest verifiers
the grader cannot attest (no signed pytest session covers their decision). Such a task is
unattestable (:func:`termgrade.audit.attestable.attestability`): its honest solution scores
exactly 1 through :func:`run_task`, with ``attested`` false, and a dishonest one still
scores 0 (no work done, a forged reward, a replaced tool). An attestable task's trial is
attested, and a trial is never graded unattested without a reason recorded for its task:
the same bash-only task graded as attestable scores 0.
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.audit.attestable import attestability
from termgrade.grade.record import graded_record
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.scoring.verifier.attestable import ATTESTED, Attestability
from termgrade.task import Task, load_task
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.docker

BASH_TEST_SH = textwrap.dedent("""\
    #!/usr/bin/env bash
    mkdir -p /logs/verifier
    if [ -f /app/out.txt ] && [ "$(cat /app/out.txt)" = hello ]; then
      echo 1 > /logs/verifier/reward.txt
    else
      echo 0 > /logs/verifier/reward.txt
    fi
    """)

UNITTEST_TEST_SH = textwrap.dedent("""\
    #!/usr/bin/env bash
    mkdir -p /logs/verifier
    cd /tests || exit 1
    if python3 -m unittest discover -s /tests -p 'test_*.py' -v; then r=1; else r=0; fi
    echo $r > /logs/verifier/reward.txt
    """)

UNITTEST_TESTS = textwrap.dedent("""\
    import unittest
    from pathlib import Path


    class TestOutput(unittest.TestCase):
        def test_exists(self):
            self.assertTrue(Path("/app/out.txt").is_file())

        def test_content(self):
            self.assertEqual(Path("/app/out.txt").read_text().strip(), "hello")


    if __name__ == "__main__":
        unittest.main()
    """)

TASKS = {"unattested-bash": {"test_sh": BASH_TEST_SH},
         "unattested-unittest": {"test_sh": UNITTEST_TEST_SH, "tests": UNITTEST_TESTS}}

CHEATS = {
    # The verifier's reward file written in the agent's container, no work done.
    "forged-reward": "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n",
    # A tool the bash check trusts, replaced so that it prints what the check wants.
    "replaced-cat": "printf '#!/bin/sh\\necho hello\\n' > /usr/bin/cat && chmod +x /usr/bin/cat\n"
                    "touch /app/out.txt\n",
    # python3 on PATH replaced by one that exits 0 whatever unittest would say.
    "replaced-python": "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/python3 && "
                       "chmod +x /usr/local/bin/python3\n",
}


def _task(make_task: MakeTask, task_id: str, solve: str | None = None) -> Task:
    pieces = {**TASKS[task_id], **({"solve": solve} if solve else {})}
    return load_task(make_task(task_id, **pieces))


def _grade(task: Task, agent: AgentName,
           attestable: Attestability | None = None) -> RunOutcome:
    return run_task(task, build_task_image(task).tag, agent,
                    attestable=attestable or attestability(task))


def _why(outcome: RunOutcome) -> object:
    return outcome.error, outcome.failure, outcome.verifier and outcome.verifier.output[-2000:]


@pytest.mark.parametrize("task_id", list(TASKS))
def test_an_honest_unattested_verifier_scores_exactly_one(make_task: MakeTask,
                                                          task_id: str) -> None:
    task = _task(make_task, task_id)
    found = attestability(task)
    assert not found.attested and found.reason and "verifier_attested" in found.reason
    outcome = _grade(task, AgentName.ORACLE)
    assert outcome.reward == 1.0, _why(outcome)
    assert outcome.attested is False
    assert outcome.verifier is not None and outcome.verifier.attested is False
    now = datetime.now(UTC)
    record = graded_record(task_id=task_id, model="oracle", attempt=0, retry_index=0,
                           outcome=outcome, started_at=now, finished_at=now)
    assert record.passed and record.attested is False


@pytest.mark.parametrize("task_id", list(TASKS))
def test_doing_nothing_on_an_unattested_task_scores_zero(make_task: MakeTask,
                                                         task_id: str) -> None:
    outcome = _grade(_task(make_task, task_id), AgentName.NOP)
    assert outcome.error is None and outcome.reward == 0.0, _why(outcome)
    assert outcome.attested is False


@pytest.mark.parametrize(("task_id", "cheat"), [
    ("unattested-bash", "forged-reward"), ("unattested-bash", "replaced-cat"),
    ("unattested-unittest", "forged-reward"), ("unattested-unittest", "replaced-python")])
def test_a_cheat_on_an_unattested_task_scores_zero(make_task: MakeTask, task_id: str,
                                                   cheat: str) -> None:
    """A dishonest reference solution (the oracle runs it) on each task."""
    outcome = _grade(_task(make_task, task_id, CHEATS[cheat]), AgentName.ORACLE)
    assert outcome.error is None and outcome.reward == 0.0, _why(outcome)
    assert outcome.attested is False


def test_an_integrity_finding_zeroes_an_unattested_task_that_test_sh_passed(
        make_task: MakeTask) -> None:
    """The work done, plus a stand-in inside the transfer set (a symlink in the working
    directory into the grader's /tests): test.sh still reports 1, and the finding alone
    makes it 0. (A wrapper created outside what the task asks for, such as
    /usr/local/bin/cat, never reaches the scoring container: it is left out, not a
    finding.)"""
    shadow = ("echo hello > /app/out.txt\n"
              "ln -s /tests/test.sh /app/peek\n")
    outcome = _grade(_task(make_task, "unattested-bash", shadow), AgentName.ORACLE)
    assert outcome.verifier is not None and outcome.verifier.raw_reward == 1.0, _why(outcome)
    assert outcome.reward == 0.0 and outcome.verifier.tampered, _why(outcome)
    assert outcome.failure and outcome.failure.startswith("integrity findings")


def test_an_unattested_task_graded_as_attestable_scores_zero(make_task: MakeTask) -> None:
    """The strict rule is what the unattested branch relaxes: without it, the same honest
    bash-only solution gets 0 (no attested session), and the trial stays attested."""
    outcome = _grade(_task(make_task, "unattested-bash"), AgentName.ORACLE, ATTESTED)
    assert outcome.error is None and outcome.reward == 0.0, _why(outcome)
    assert outcome.attested is True and outcome.failure


def test_an_attestable_task_is_attested_whether_it_passes_or_not(make_task: MakeTask) -> None:
    task = load_task(make_task("attestable"))
    assert attestability(task) == ATTESTED
    passed = _grade(task, AgentName.ORACLE)
    assert passed.reward == 1.0 and passed.attested, _why(passed)
    now = datetime.now(UTC)
    assert graded_record(task_id="attestable", model="oracle", attempt=0, retry_index=0,
                         outcome=passed, started_at=now, finished_at=now).attested is True
    failed = _grade(task, AgentName.NOP)
    assert failed.reward == 0.0 and failed.attested, _why(failed)
    assert failed.verifier is not None and failed.verifier.attested
