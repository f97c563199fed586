"""``verifier_attested``: a pytest run with the grader's environment removed is unattested.

``env -i`` (or ``env -``, ``env -u PYTHONPATH``, ``unset PYTEST_PLUGINS``, ``sudo``, ``su``,
``runuser``) drops what the grader's sitecustomize and plugin are found by: no attested
session can cover that pytest, and without ``PYTHONDONTWRITEBYTECODE`` it writes bytecode
into ``/tests``. The shell parser marks each command below such a wrapper (``env_reset``)
and the static check names it (fairness round 9, N2).
"""

from __future__ import annotations

import pytest

from termgrade.audit.shellparse import GRADER_VARIABLES, shell_commands
from termgrade.audit.verifier_steps import verifier_steps_reason
from termgrade.scoring.verifier.command import verifier_env
from termgrade.task import load_task
from tests.support.task_dirs import MakeTask

T = "/tests/test_outputs.py"
REWARD = ("[ $? -eq 0 ] && echo 1 > /logs/verifier/reward.txt "
          "|| echo 0 > /logs/verifier/reward.txt\n")


@pytest.mark.parametrize(("script", "wrapper"), [
    (f"env -i PATH=/usr/bin:/bin bash -c 'python3 -m pytest {T} -rA'\n", "env -i"),
    (f"env -i PYTHONDONTWRITEBYTECODE=1 PATH=/usr/bin HOME=/root bash -c "
     f"'python3 -m pytest -q {T}'\n", "env -i"),
    (f"exec env -i PATH=/usr/bin:/bin python3 -m pytest {T}\n", "env -i"),
    (f"env - PATH=/usr/bin pytest {T}\n", "env -"),
    (f"env --ignore-environment PATH=/usr/bin pytest {T}\n", "env --ignore-environment"),
    (f"/usr/bin/env -i PATH=/usr/bin pytest {T}\n", "env -i"),
    (f"env -iS 'pytest {T}'\n", "env -iS"),
    (f"timeout 600 env -i PATH=/usr/bin pytest {T}\n", "env -i"),
    (f"env -u PYTHONDONTWRITEBYTECODE pytest {T}\n", "env -u PYTHONDONTWRITEBYTECODE"),
    (f"env -uPYTHONPATH pytest {T}\n", "env -u PYTHONPATH"),
    (f"env --unset=PYTEST_PLUGINS pytest {T}\n", "env --unset=PYTEST_PLUGINS"),
    (f"unset PYTHONPATH\npytest {T}\n", "unset PYTHONPATH"),
    (f"PYTHONDONTWRITEBYTECODE= pytest {T}\n", "PYTHONDONTWRITEBYTECODE="),
    (f"export PYTHONDONTWRITEBYTECODE=\npytest {T}\n", "PYTHONDONTWRITEBYTECODE="),
    (f"env PYTEST_PLUGINS=myplugin pytest {T}\n", "PYTEST_PLUGINS=myplugin"),
    (f"sudo -u root pytest {T}\n", "sudo"),
    (f"su - root -c 'python3 -m pytest {T} -rA'\n", "su -"),
    (f"su root -c 'pytest {T}'\n", "su"),
    (f"runuser -l root -c 'python3 -m pytest {T} -rA'\n", "runuser -l"),
    (f"runuser -u root -- pytest {T}\n", "runuser -u"),
    (f"env -i PATH=/usr/bin bash <<EOF\npytest {T}\nEOF\n", "env -i"),
    (f"run() {{\n  pytest {T}\n}}\nenv -i PATH=/usr/bin bash -c 'pytest {T}'\nrun\n", "env -i"),
])
def test_pytest_without_the_graders_environment_is_unattested(script: str,
                                                               wrapper: str) -> None:
    reason = verifier_steps_reason("#!/bin/bash\nmkdir -p /logs/verifier\n" + script + REWARD)
    assert reason is not None and f"under `{wrapper}`" in reason, reason
    assert "unattested" in reason and "graded by test.sh's own reward" in reason


def test_a_runner_script_run_under_env_i_is_unattested() -> None:
    reason = verifier_steps_reason("env -i PATH=/usr/bin bash /tests/run.sh\n",
                                   {"run.sh": f"cd /tests\npytest {T}\n"})
    assert reason is not None and "`env -i`, run by /tests/run.sh" in reason, reason
    python = verifier_steps_reason("env -i PATH=/usr/bin python3 /tests/run.py\n",
                                   {"run.py": "import pytest\npytest.main(['/tests'])\n"})
    assert python is not None and "under `env -i`" in python, python


@pytest.mark.parametrize("script", [
    f"env PATH=/opt/venv/bin:$PATH python3 -m pytest {T} -rA\n",
    f"env -u FOO -C /tests pytest {T}\n",              # a variable not the grader's
    f"env -S 'pytest {T} -rA'\n",
    f"PYTHONDONTWRITEBYTECODE=1 pytest {T}\n",
    f'export PYTEST_PLUGINS="myplugin,$PYTEST_PLUGINS"\npytest {T}\n',
    f"OTHER= pytest {T}\n",
    f"(unset PYTHONPATH; echo scratch)\npytest {T}\n",  # a subshell's unset stays there
    f"env -i PATH=/usr/bin sh -c 'echo ready'\npytest {T}\n",  # env -i, but not for pytest
    f"exec python3 -m pytest {T}\n",
])
def test_the_graders_environment_kept_stays_attested(script: str) -> None:
    assert verifier_steps_reason("#!/bin/bash\n" + script + REWARD) is None


def test_each_command_below_the_wrapper_carries_the_reset() -> None:
    found = shell_commands("env -i PATH=/bin bash -c 'cd /tests && pytest -q; echo done'\n"
                           "echo after\n")
    assert [(c.words[0], c.cwd, c.env_reset) for c in found] == [
        ("cd", "/tests", "env -i"), ("pytest", "/tests", "env -i"), ("echo", "/tests", "env -i"),
        ("echo", None, None)]


def test_grader_variables_are_the_graders(make_task: MakeTask) -> None:
    """The variables whose removal is a reset are ones the grader sets for test.sh."""
    env = verifier_env(load_task(make_task("env-vars")), "termgrade_attest_x")
    assert env.keys() >= GRADER_VARIABLES
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["PYTEST_PLUGINS"]
