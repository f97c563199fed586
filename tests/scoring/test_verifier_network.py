"""B's network namespace has nothing of the agent's in it. The agent leaves listeners in A
(a TCP port and an abstract Unix socket, frozen but alive while B runs); honest tests in B
that bind the same names, and expect nothing to answer on another port, pass. Real Docker
containers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import run_task
from termgrade.task import load_task
from tests.support.task_dirs import STANDARD_TEST_SH, write_task

pytestmark = [pytest.mark.docker]

LISTENER = textwrap.dedent("""\
    import socket, time
    held = []
    for port in (8765, 8766):
        s = socket.socket(); s.bind(("127.0.0.1", port)); s.listen(8); held.append(s)
    u = socket.socket(socket.AF_UNIX); u.bind("\\0termgrade-probe"); u.listen(8); held.append(u)
    time.sleep(3600)
    """)

TESTS = textwrap.dedent("""\
    import socket

    import pytest


    def test_the_port_is_free():
        s = socket.socket()
        s.bind(("127.0.0.1", 8765))
        s.close()


    def test_the_abstract_name_is_free():
        u = socket.socket(socket.AF_UNIX)
        u.bind("\\0termgrade-probe")
        u.close()


    def test_nothing_answers():
        c = socket.socket()
        c.settimeout(2)
        with pytest.raises(ConnectionRefusedError):
            c.connect(("127.0.0.1", 8766))
    """)

WAIT = "for _ in $(seq 50); do grep -q termgrade-probe /proc/net/unix && break; sleep 0.1; done\n"
SOLVE = (f"cat > /root/listen.py <<'PY'\n{LISTENER}PY\n"
         f"nohup python3 /root/listen.py >/dev/null 2>&1 &\n{WAIT}")


def test_the_agents_listeners_are_not_in_the_verifiers_namespace(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path, "net-listeners", solve=SOLVE, tests=TESTS))
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.error is None
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-2000:])


def test_twin_the_same_listeners_in_the_verifiers_namespace_fail_the_tests(
        tmp_path: Path) -> None:
    # test.sh itself starts them in B before pytest: what the tests see if B shared A's
    # namespace.
    test_sh = STANDARD_TEST_SH.replace(
        "cd /tests || exit 1\n",
        f"cd /tests || exit 1\n(python3 /tests/listen.py >/dev/null 2>&1 &)\n{WAIT}")
    task = load_task(write_task(tmp_path, "net-listeners-twin", tests=TESTS, test_sh=test_sh,
                                extra_test_files={"listen.py": LISTENER}))
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.error is None and outcome.reward == 0.0
    assert outcome.verifier is not None
    failed = {t.name for t in outcome.verifier.tests if t.outcome != "passed"}
    assert failed == {"test_the_port_is_free", "test_the_abstract_name_is_free",
                      "test_nothing_answers"}, outcome.verifier.output[-2000:]
