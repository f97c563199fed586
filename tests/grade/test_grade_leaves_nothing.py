"""Nothing is left running after any exit of ``grade`` (issue 33, item 6).

A real ``termgrade grade`` process against a scripted endpoint on loopback and the real
Docker engine: the endpoint dies while trials are in flight (agent containers up, the
model's replies slowed), ``grade`` exits 1 with the finished trials kept, and afterwards
the engine holds no container of the run, neither a (paused) agent container nor a
scoring one. Ctrl-C is covered by tests/sandbox/test_leftover_containers.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from termgrade.grade import TRIALS_FILE
from termgrade.grade.cleanup import run_label
from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.ownership import RUN_LABEL
from tests.support.scripted_tools import Fault, FaultPlan, ScriptedToolEndpoint, replay_solution

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"
ENV = {**os.environ, "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1", "COLUMNS": "250",
       "PYTHONPATH": str(ROOT)}

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def of_run(run: str) -> list[str]:
    return [f"{c.name} ({c.status})" for c in docker_client().containers.list(
        all=True, filters={"label": [f"{RUN_LABEL}={run}"]}, ignore_removed=True)]


def test_an_endpoint_that_dies_mid_run_leaves_no_container(tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = "scripted-tool-stand-in"
    run = run_label(out / TRIALS_FILE, model)
    slow = FaultPlan(when=[(lambda n, body: n > 1, Fault.slow(1.0))])  # the probe is fast
    llm = ScriptedToolEndpoint(replay_solution((TASK / "solution" / "solve.sh").read_text()),
                               model=model, faults=slow).start()
    try:
        grade = subprocess.Popen(
            [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model", model,
             "--base-url", llm.url, "-k", "2", "-w", "2", "-o", str(out)], cwd=tmp_path,
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 180
        while len(of_run(run)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(of_run(run)) >= 2, "the run never started its containers"
    finally:
        llm.stop()  # the endpoint dies mid-run: the port refuses every connection
    output, _ = grade.communicate(timeout=540)
    assert grade.returncode == 1, output
    assert of_run(run) == [], output


def test_sigterm_mid_run_leaves_no_container(tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = "scripted-tool-stand-in"
    run = run_label(out / TRIALS_FILE, model)
    slow = FaultPlan(when=[(lambda n, body: n > 1, Fault.slow(2.0))])
    with ScriptedToolEndpoint(replay_solution((TASK / "solution" / "solve.sh").read_text()),
                              model=model, faults=slow) as llm:
        grade = subprocess.Popen(
            [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model", model,
             "--base-url", llm.url, "-k", "2", "-w", "2", "-o", str(out)], cwd=tmp_path,
            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 180
        while len(of_run(run)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(of_run(run)) >= 2, "the run never started its containers"
        grade.send_signal(signal.SIGTERM)
        output, _ = grade.communicate(timeout=120)
    assert grade.returncode == 143, output
    assert of_run(run) == [], output
