"""``termgrade grade`` as a user runs it: a real endpoint on loopback, real containers, a
run killed half-way and resumed, then ``termgrade labels`` on what it wrote."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from termgrade.grade import TRIALS_FILE, TrialJournal
from tests.support.scripted_tools import Fault, FaultPlan, ScriptedToolEndpoint, replay_solution

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"

pytestmark = [pytest.mark.docker, pytest.mark.slow]

def _grade(out: Path, url: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT),  # this checkout's code
           "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1"}
    return subprocess.Popen(
        [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model",
         "scripted-tool-stand-in", "--base-url", url, "-k", "3", "-o", str(out), "-w", "1",
         *extra], cwd=out.parent, env=env, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_killed_grade_run_resumes_and_feeds_labels(tmp_path: Path) -> None:
    out = tmp_path / "run"
    trials = out / TRIALS_FILE
    solve = (TASK / "solution" / "solve.sh").read_text()
    # slow replies leave time to kill the run with one trial journaled and one in flight
    slow = FaultPlan(when=[(lambda n, body: True, Fault.slow(0.5))])
    with ScriptedToolEndpoint(replay_solution(solve), faults=slow) as llm:
        first = _grade(out, llm.url)
        deadline = time.monotonic() + 300
        while _lines(trials) < 1 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(30)
        journaled = TrialJournal(trials).load()
        assert 1 <= len(journaled) < 3
        second = _grade(out, llm.url)
        output, _ = second.communicate(timeout=600)
    assert second.returncode == 0, output
    records = TrialJournal(trials).load()
    assert records[:len(journaled)] == journaled
    counted = [r for r in records if r.counted]
    assert sorted(r.attempt for r in counted) == [0, 1, 2]
    assert len({r.trial_id for r in records}) == len(records)
    assert all(r.passed and r.reward == 1.0 for r in counted)
    assert "resumed" in output
    labels = tmp_path / "labels.jsonl"
    done = subprocess.run([sys.executable, "-m", "termgrade", "labels", str(trials), "-o",
                           str(labels)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in labels.read_text().splitlines()]
    assert (row["task_id"], row["scaffold"], row["pass_rate"], row["n_counted"]) == (
        "word-frequency", "bash-tool", 1.0, 3)


class _Unauthorized(BaseHTTPRequestHandler):
    """An endpoint that refuses every request, as one given a wrong API key does."""

    def do_POST(self) -> None:
        body = b'{"error": {"message": "Incorrect API key provided", "code": 401}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_endpoint_that_refuses_the_key_stops_the_run_with_a_clear_error(
        tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        run = _grade(tmp_path / "bad", f"http://127.0.0.1:{server.server_port}/v1")
        output, _ = run.communicate(timeout=300)
    finally:
        server.shutdown()
    assert run.returncode == 1, output
    assert "refuses every request" in output and "HTTP 401" in output
    assert "API key" in output


def test_a_grade_run_whose_only_task_does_not_build_exits_1_with_the_step(
        tmp_path: Path) -> None:
    """(Issue 44, item 4: this was 4 infrastructure losses ending at "failed:"; a run
    that loses every trial is tested in test_grade_runner.py.)"""
    from tests.support.task_dirs import write_task

    task = write_task(tmp_path / "tasks", "unbuildable",
                      dockerfile="FROM termgrade/base:local\nRUN echo broken-step && exit 3\n")
    out = tmp_path / "run"
    with ScriptedToolEndpoint(replay_solution("echo hello > /app/out.txt\n")) as llm:
        env = {**os.environ, "PYTHONPATH": str(ROOT),  # this checkout's code
               "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1"}
        done = subprocess.run(
            [sys.executable, "-m", "termgrade", "grade", str(task), "--model",
             "scripted-tool-stand-in", "--base-url", llm.url, "-k", "1", "-o", str(out)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    said = " ".join(output.split())
    assert "build_failed unbuildable: step 2/2 `RUN echo broken-step && exit 3` exited 3: " \
        "broken-step" in said, output
    assert "1 task(s) did not build" in said and "next: termgrade labels" not in output
    assert "lost to infrastructure" not in output
    assert len(TrialJournal(out / TRIALS_FILE).load()) == 0


def test_the_summary_ends_with_a_per_task_table_and_counts_http_retries(
        tmp_path: Path) -> None:
    out = tmp_path / "run"
    solve = (TASK / "solution" / "solve.sh").read_text()
    # every third request is rate limited: the run succeeds, but not as a clean one
    every_third = FaultPlan(when=[(lambda n, body: n % 3 == 0, Fault.rate_limit(0))])
    with ScriptedToolEndpoint(replay_solution(solve), faults=every_third) as llm:
        env = {**os.environ, "PYTHONPATH": str(ROOT),  # this checkout's code
               "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1",
               "COLUMNS": "200"}
        done = subprocess.run(
            [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model",
             "scripted-tool-stand-in", "--base-url", llm.url, "-k", "1", "-w", "4", "-o",
             str(out)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "running 1 trial(s) at once" in output  # one trial, not the 4 workers
    [record] = TrialJournal(out / TRIALS_FILE).load()
    assert record.counted and record.http_retries is not None and record.http_retries >= 1
    table = output[output.index("per task"):]
    assert "HTTP retries" in table and "band" in table
    [row] = [line for line in table.splitlines() if "word-frequency" in line]
    cells = [c.strip() for c in row.strip("│┃| ").split("│")]
    assert cells == ["word-frequency", "1", "1", "1.00", "one", "0", str(record.http_retries)]
    assert "saved vs fixed k" not in output  # only an adaptive run saves


def test_adaptive_at_a_k_where_it_cannot_save_says_why(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a closed port: the run stops at the probe, after the word
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT),  # this checkout's code
           "TERMGRADE_PROGRESS": "0", "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model", "m", "--base-url",
         f"http://127.0.0.1:{port}/v1", "-k", "4", "--adaptive", "-o", str(tmp_path / "out")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "--adaptive saves nothing at -k 4" in done.stderr
    assert "use -k 6 or more, or a lower --confidence" in done.stderr
    assert done.returncode == 1
