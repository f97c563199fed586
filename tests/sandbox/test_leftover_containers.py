"""Interrupted runs leave nothing: what a user sees after Ctrl-C or SIGKILL.

A process killed with its container up (tests/support/leftover_maker.py) leaves a
labelled container whose owner is gone: ``termgrade doctor`` reports it, ``doctor --reap``
removes it, and a resumed ``grade`` of the same output removes its own run's. Ctrl-C
during ``grade`` removes the run's containers; Ctrl-C during an image build stops the
build in the engine, not only in the client.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.cli.app import app
from termgrade.core.settings import SETTINGS
from termgrade.grade import TRIALS_FILE
from termgrade.grade.cleanup import run_label
from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.leftovers import find_leftovers
from termgrade.sandbox.ownership import OWNER_LABEL, RUN_LABEL, SANDBOX_LABEL, owner_id
from tests.support.scripted_tools import Fault, FaultPlan, ScriptedToolEndpoint, replay_solution
from tests.support.task_dirs import write_task

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"
ENV = {**os.environ, "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1", "COLUMNS": "250",
       "PYTHONPATH": str(ROOT)}
runner = CliRunner()

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def exists(container_id: str) -> bool:
    from docker.errors import NotFound

    try:
        docker_client().containers.get(container_id)
    except NotFound:
        return False
    return True


def of_run(run: str) -> list[str]:
    return [c.id for c in docker_client().containers.list(
        all=True, filters={"label": [f"{RUN_LABEL}={run}"]}, ignore_removed=True)]


def killed_leftover(run: str | None = None) -> str:
    """The id of a container whose owner was SIGKILLed, as a killed run leaves one."""
    maker = subprocess.Popen([sys.executable, "-m", "tests.support.leftover_maker",
                              SETTINGS.base_image, *([run] if run else [])], cwd=ROOT,
                             env=ENV, stdout=subprocess.PIPE, text=True)
    assert maker.stdout is not None
    container_id = maker.stdout.readline().strip()
    maker.kill()
    maker.wait(30)
    assert container_id and exists(container_id)
    return container_id


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for container_id in made:
        if exists(container_id):
            docker_client().api.remove_container(container_id, force=True)


def test_doctor_reports_and_reaps_a_killed_runs_container(cleanup: list[str]) -> None:
    from termgrade.sandbox.docker_sandbox import DockerSandbox

    leftover = killed_leftover("run-of-the-test")
    cleanup.append(leftover)
    live = DockerSandbox.start(SETTINGS.base_image, label="live-test")  # this process owns it
    cleanup.append(live.id)
    assert docker_client().containers.get(live.id).labels[OWNER_LABEL] == owner_id()
    name = docker_client().containers.get(leftover).name
    done = runner.invoke(app, ["doctor"], env={"COLUMNS": "250"})
    assert done.exit_code == 1, done.output  # a leftover fails the check
    assert "leftover containers" in done.output and name in done.output
    assert "run run-of-the-test" in done.output and "termgrade doctor --reap" in done.output
    assert live.id not in {c.id for c in find_leftovers()}
    done = runner.invoke(app, ["doctor", "--reap"], env={"COLUMNS": "250"})
    assert done.exit_code == 0, done.output
    assert "removed" in done.output and name in done.output
    assert not exists(leftover) and exists(live.id)  # a live run's container is kept
    live.close()


def test_a_resumed_grade_reaps_what_the_killed_run_left(tmp_path: Path,
                                                        cleanup: list[str]) -> None:
    out = tmp_path / "run"
    model = "scripted-tool-stand-in"
    leftover = killed_leftover(run_label(out / TRIALS_FILE, model))
    cleanup.append(leftover)
    other = killed_leftover("another-run")  # not this output's: the resumed run keeps it
    cleanup.append(other)
    with ScriptedToolEndpoint(replay_solution((TASK / "solution" / "solve.sh").read_text()),
                              model=model) as llm:
        done = subprocess.run(
            [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model", model,
             "--base-url", llm.url, "-k", "1", "-o", str(out)], cwd=tmp_path, env=ENV,
            capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "removed 1 container(s) an interrupted run of this output had left" in done.stderr
    assert not exists(leftover) and exists(other)


def test_ctrl_c_during_grade_leaves_no_container_of_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = "scripted-tool-stand-in"
    run = run_label(out / TRIALS_FILE, model)
    slow = FaultPlan(when=[(lambda n, body: n > 1, Fault.slow(2.0))])  # the probe is fast
    with ScriptedToolEndpoint(replay_solution((TASK / "solution" / "solve.sh").read_text()),
                              model=model, faults=slow) as llm:
        grade = subprocess.Popen(
            [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model", model,
             "--base-url", llm.url, "-k", "2", "-w", "2", "-o", str(out)], cwd=tmp_path,
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while len(of_run(run)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(of_run(run)) >= 2, "the run never started its containers"
        began = time.monotonic()
        grade.send_signal(signal.SIGINT)
        output, _ = grade.communicate(timeout=60)
        stopped_in = time.monotonic() - began
    assert grade.returncode == 130, output
    assert of_run(run) == [], output
    assert stopped_in < 20, f"Ctrl-C took {stopped_in:.0f} s"  # not the trials' whole length


def test_ctrl_c_during_an_image_build_stops_the_build(tmp_path: Path) -> None:
    nonce = uuid.uuid4().hex[:12]
    task = write_task(tmp_path / "tasks", f"slow-build-{nonce}", dockerfile=(
        f"FROM {SETTINGS.base_image}\nRUN sleep 120 && echo {nonce}\n"))
    verify = subprocess.Popen([sys.executable, "-m", "termgrade", "verify", str(task)],
                              cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    def building() -> list[str]:
        return [c.id for c in docker_client().containers.list(all=True, ignore_removed=True)
                if nonce in " ".join(c.attrs["Config"].get("Cmd") or [])]

    deadline = time.monotonic() + 120
    while not building() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert building(), "the build never started"
    began = time.monotonic()
    verify.send_signal(signal.SIGINT)
    output, _ = verify.communicate(timeout=60)
    assert verify.returncode == 130, output
    assert time.monotonic() - began < 20  # not the 120 s the build step takes
    deadline = time.monotonic() + 20
    while building() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert building() == []  # the engine cancelled the build and removed its container


def warm_of_run(run: str) -> list[str]:
    return [c.id for c in docker_client().containers.list(
        all=True, filters={"label": [f"{RUN_LABEL}={run}"]}, ignore_removed=True)
        if "-warm-" in (c.name or "")]


def test_ctrl_c_while_a_warm_pair_waits_leaves_no_container_of_the_run(tmp_path: Path) -> None:
    # One worker, k=3: one trial runs while the next, queued, has its pair made ahead
    # by the warm pool. Ctrl-C then: the running trial's and the warm pair's containers go.
    out = tmp_path / "run"
    model = "scripted-tool-stand-in"
    run = run_label(out / TRIALS_FILE, model)
    slow = FaultPlan(when=[(lambda n, body: n > 1, Fault.slow(3.0))])  # the probe is fast
    with ScriptedToolEndpoint(replay_solution((TASK / "solution" / "solve.sh").read_text()),
                              model=model, faults=slow) as llm:
        grade = subprocess.Popen(
            [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model", model,
             "--base-url", llm.url, "-k", "3", "-w", "1", "-o", str(out)], cwd=tmp_path,
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while len(warm_of_run(run)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(warm_of_run(run)) == 2, "the warm pool never made the queued trial's pair"
        grade.send_signal(signal.SIGINT)
        output, _ = grade.communicate(timeout=60)
    assert grade.returncode == 130, output
    assert of_run(run) == [], output


def of_owner(pid: int) -> list[str]:
    """Containers whose owner label names process ``pid`` on this host."""
    prefix = f"{owner_id().split(':')[0]}:{pid}:"
    return [c.id for c in docker_client().containers.list(
        all=True, filters={"label": [f"{SANDBOX_LABEL}=sandbox"]}, ignore_removed=True)
        if (c.labels or {}).get(OWNER_LABEL, "").startswith(prefix)]


def test_ctrl_c_during_verify_leaves_no_container_of_it(tmp_path: Path) -> None:
    # The oracle runs two at a time and the third run's pair is made ahead: after Ctrl-C
    # none of the containers verify made is left.
    task = write_task(tmp_path / "tasks", "slow-oracle",
                      solve="sleep 4; echo hello > /app/out.txt\n")
    verify = subprocess.Popen([sys.executable, "-m", "termgrade", "verify", str(task),
                               "--repeat", "2"], cwd=tmp_path, env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 180
    while len(of_owner(verify.pid)) < 6 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(of_owner(verify.pid)) >= 6, "verify never had two trials and a warm pair up"
    verify.send_signal(signal.SIGINT)
    output, _ = verify.communicate(timeout=90)
    assert verify.returncode == 130, output
    assert of_owner(verify.pid) == [], output
