"""Why each episode ended is recorded: the trial record, the episodes rows, the trial page.

A real ``termgrade grade`` run of one corpus task (Docker) against a scripted tool-calling
endpoint on loopback: one attempt calls ``finish`` at once, the other only ever replies
with text and no tool call (the scaffold gives up after ``max_invalid_turns`` of them).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import urllib.request
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from termgrade.agent.loop import StopReason
from termgrade.builders.trajectories import build_trajectories
from termgrade.core.errors import DataWarning
from termgrade.trialsets import iter_trial_records
from termgrade.view import find_sources, load_run
from termgrade.view.server import ViewServer
from tests.support.scripted_tools import (
    Messages,
    Reply,
    ScriptedToolEndpoint,
    assistant_turns,
    finish_call,
    text_reply,
)

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"


class _FinishThenTalk:
    """The first trial's conversation finishes at once; every later one only talks (the
    endpoint probe's one-token request, which names no task, is answered with text)."""

    def __init__(self) -> None:
        self.finished = False
        self.lock = threading.Lock()

    def __call__(self, messages: Messages) -> Reply:
        task = (TASK / "instruction.md").read_text().strip()[:200]
        opening = assistant_turns(messages) == 0 and any(
            task in str(m.get("content")) for m in messages)
        with self.lock:
            if opening and not self.finished:
                self.finished = True
                return finish_call("Done.")
        return text_reply("I think the task is done; no command needed.")


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stop-reason") / "run"
    env = {**os.environ, "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1"}
    with ScriptedToolEndpoint(_FinishThenTalk()) as llm:
        done = subprocess.run(
            [sys.executable, "-m", "termgrade", "grade", str(TASK), "--model",
             "scripted-tool-stand-in", "--base-url", llm.url, "-k", "2", "-o", str(out),
             "-w", "1"], cwd=out.parent, env=env, text=True, capture_output=True,
            timeout=900)
    assert (out / "trials.jsonl").is_file(), done.stdout + done.stderr
    return out


def test_each_trial_records_why_its_episode_ended(graded: Path) -> None:
    records = list(iter_trial_records(graded / "trials.jsonl"))
    assert sorted(r.stop_reason or "-" for r in records) == [
        StopReason.FINISHED, StopReason.INVALID_TURNS]
    talker = next(r for r in records if r.stop_reason == StopReason.INVALID_TURNS)
    assert talker.counted and talker.turns == 5 and not talker.agent_timed_out


def test_the_episodes_rows_and_the_trial_page_show_it(graded: Path, tmp_path: Path) -> None:
    repo = tmp_path / "traj"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        build_trajectories(repo, trials=graded / "trials.jsonl",
                           task_roots=[ROOT / "environments"])
        index = load_run(find_sources(graded))
    episodes = pq.read_table(sorted((repo / "data" / "episodes").glob("*.parquet"))[0])
    assert sorted(episodes.column("stop_reason").to_pylist()) == [
        StopReason.FINISHED, StopReason.INVALID_TURNS]
    row = next(i for i in range(len(index.trials))
               if index.trial(i).stop_reason == StopReason.INVALID_TURNS)
    with ViewServer(index) as server, \
            urllib.request.urlopen(f"{server.url}trial/{row}") as answer:
        page = answer.read().decode()
    assert "<th>episode ended</th><td>invalid_turns</td>" in page
