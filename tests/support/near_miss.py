"""A real near-miss trial: word-frequency's reference solution with one slip (a missing
file exits 1, the tests want 2), replayed by a scripted stand-in behind a real loopback
server and scored by the real grader in a real container."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.grade.record import graded_record
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import run_task
from termgrade.task import load_task
from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution

TASK = Path(__file__).resolve().parents[2] / "environments" / "word-frequency"
SLIP = "test_missing_file_exits_2"
"""The one test the slip fails."""


def near_miss_solution() -> str:
    text = (TASK / "solution" / "solve.sh").read_text()
    assert "  exit 2\n" in text
    return text.replace("  exit 2\n", "  exit 1\n", 1)


def near_miss_record() -> TrialRecord:
    task = load_task(TASK)
    image = build_task_image(task).tag
    with ScriptedToolEndpoint(replay_solution(near_miss_solution())) as llm:
        agent = ModelAgent(Endpoint(llm.url, llm.model, api_key_env=None), ScaffoldConfig())
        outcome = run_task(task, image, agent)
    now = datetime.now(UTC)
    return graded_record(task_id=task.task_id, model=agent.name, attempt=0, retry_index=0,
                         outcome=outcome, started_at=now, finished_at=now)
