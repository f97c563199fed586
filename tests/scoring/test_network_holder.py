"""B's network namespace: held by a container of its own (the engine's namespace setup off
B's start), with nothing of the agent's in it. The agent leaves listeners in A (a TCP port
and an abstract Unix socket, frozen but alive while B runs); honest tests in B that bind the
same names pass. The twin, a holder that listens itself, fails the same tests: they see a
shared namespace. Real Docker containers."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.images import build_task_image
from termgrade.sandbox.ownership import OWNER_LABEL, owner_id
from termgrade.scoring import pair as pair_module
from termgrade.scoring.trial import run_task
from termgrade.scoring.warm import WARM
from termgrade.task import load_task
from tests.support.task_dirs import write_task

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

SOLVE = (f"cat > /root/listen.py <<'PY'\n{LISTENER}PY\n"
         "nohup python3 /root/listen.py >/dev/null 2>&1 &\n"
         "for _ in $(seq 50); do grep -q termgrade-probe /proc/net/unix && break; sleep 0.1; done\n")


def _containers(part: str) -> list[str]:
    return [c.name for c in docker_client().containers.list(
        all=True, filters={"label": f"{OWNER_LABEL}={owner_id()}"}, ignore_removed=True)
        if part in (c.name or "")]


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_task(tmp_path_factory.mktemp("net"), "net-listeners", solve=SOLVE,
                      tests=TESTS)
    build_task_image(load_task(root))
    return root


def test_the_agents_listeners_are_not_in_the_verifiers_namespace(task_dir: Path) -> None:
    task = load_task(task_dir)
    outcome = run_task(task, task.image_tag, AgentName.ORACLE)
    assert outcome.error is None
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-2000:])


def test_twin_a_holder_that_listens_fails_the_same_tests(
        task_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: Callable[..., Any] = pair_module._holder

    def listening(image: str, label: str, run: str | None, _command: list[str]) -> Any:
        return made(image, label, run, ["python3", "-c", LISTENER])

    monkeypatch.setattr(pair_module, "_holder", listening)
    task = load_task(task_dir)
    outcome = run_task(task, task.image_tag, AgentName.NOP)  # no listener from the agent
    assert outcome.error is None and outcome.reward == 0.0
    assert outcome.verifier is not None
    failed = {t.name for t in outcome.verifier.tests if t.outcome != "passed"}
    assert failed == {"test_the_port_is_free", "test_the_abstract_name_is_free",
                      "test_nothing_answers"}, outcome.verifier.output[-2000:]


def test_the_holder_is_made_with_the_pair_and_removed_after_it(task_dir: Path) -> None:
    task = load_task(task_dir)
    from termgrade.scoring.trial import make_ahead

    assert make_ahead(task, task.image_tag)
    pair = WARM.take(*_spec(task))
    assert pair is not None and pair.network_box is not None
    holder = docker_client().containers.get(pair.network_box.id)
    assert holder.attrs["HostConfig"]["NetworkMode"] == "none"
    assert holder.attrs["HostConfig"]["CapAdd"] in (None, [])
    score = docker_client().containers.get(pair.score_box.id)
    assert score.attrs["HostConfig"]["NetworkMode"] == f"container:{pair.network_box.id}"
    pair.discard()
    assert _containers("-warm-") == []


def _spec(task: Any) -> tuple[Any, None]:
    from termgrade.scoring.trial import scoring_setup

    spec, _closure, _procs = scoring_setup(task, task.image_tag)
    return spec, None
