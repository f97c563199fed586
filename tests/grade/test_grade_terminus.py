"""``termgrade grade --scaffold terminus-2`` end to end, and its episodes beside Harbor's.

The CLI grades corpus tasks (real containers, the real grader) with the Terminus-2-style
scaffold talking to scripted stand-ins on loopback: the reference solutions replayed as
keystrokes (after malformed, non-JSON and incomplete turns, and a turn with no command)
pass; declaring the task complete at once scores 0. The third run plays the very replies
Harbor's own Terminus-2 played when tests/fixtures/harbor was made
(``tests.support.scripted_llm.WORD_FREQUENCY_REPLIES``), so its trial and the ingested
Harbor trial of the same task can be compared side by side: the trajectories repo built
from each (loaded back with ``datasets``) has episodes of the same fields and the same
kinds of content, step by step.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from datasets import load_dataset

from termgrade.builders import build_trajectories
from termgrade.builders.trajectory_rows import resolve_steps
from termgrade.grade import TRIALS_FILE, TrialJournal
from termgrade.ingest import ingest_harbor
from termgrade.records.trial import TrialRecord
from termgrade.task import load_task
from termgrade.validate import validate_repo
from tests.support.scripted_llm import WORD_FREQUENCY_REPLIES, ScriptedLLM
from tests.support.scripted_terminus import give_up, replay_by_instruction
from tests.support.scripted_tools import ScriptedToolEndpoint

ROOT = Path(__file__).resolve().parents[2]
TASKS = [ROOT / "environments" / "word-frequency", ROOT / "environments" / "tidy-filenames"]
HARBOR_JOB = ROOT / "tests" / "fixtures" / "harbor" / "harbor-0.9" / "terminus2-scripted"
PROMPT_LINE = re.compile(r"^root@[0-9a-f]+:/app#", re.MULTILINE)

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _grade(out: Path, url: str, model: str, *tasks: Path) -> list[TrialRecord]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERMGRADE_PROGRESS": "0",
           "NO_PROXY": "127.0.0.1"}
    done = subprocess.run(
        [sys.executable, "-m", "termgrade", "grade", *map(str, tasks), "--scaffold",
         "terminus-2", "--model", model, "--base-url", url, "--api-key-env", "", "-k", "1",
         "-w", "2", "-o", str(out)], cwd=out.parent, env=env, capture_output=True, text=True,
        timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return TrialJournal(out / TRIALS_FILE).load()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[TrialRecord]]:
    """Three CLI runs: replayed solutions, giving up, and Harbor's own replies."""
    base = tmp_path_factory.mktemp("terminus")
    tasks = [load_task(path) for path in TASKS]
    solutions = {t.instruction: t.paths.solve_script.read_text() for t in tasks}
    runs: dict[str, list[TrialRecord]] = {}
    with ScriptedToolEndpoint(replay_by_instruction(solutions)) as llm:
        runs["replay"] = _grade(base / "replay", llm.url, llm.model, *TASKS)
    with ScriptedToolEndpoint(give_up()) as llm:
        runs["give-up"] = _grade(base / "give-up", llm.url, llm.model, *TASKS)
    with ScriptedLLM(WORD_FREQUENCY_REPLIES) as harbor_script:
        runs["harbor-script"] = _grade(base / "harbor-script", harbor_script.url,
                                       harbor_script.model, TASKS[0])
    return runs


def test_replayed_solutions_pass_and_giving_up_scores_zero(
        graded: dict[str, list[TrialRecord]]) -> None:
    for run, reward in (("replay", 1.0), ("give-up", 0.0), ("harbor-script", 1.0)):
        records = graded[run]
        assert {r.task_id for r in records} == ({"word-frequency", "tidy-filenames"}
                                                if run != "harbor-script" else
                                                {"word-frequency"}), run
        for record in records:
            assert (record.counted, record.reward, record.passed) == (True, reward,
                                                                     reward == 1.0), run
            assert (record.scaffold, record.scaffold_version) == ("terminus-2", "1")
            assert record.scaffold_digest and record.attested
    digests = {r.scaffold_digest for run in graded.values() for r in run}
    assert len(digests) == 1  # one scaffold, one configuration
    replay = graded["replay"][0].episode or []
    valid = [s.is_valid_tool_call for s in replay if s.source == "agent"]
    assert valid.count(False) == 3  # the malformed, non-JSON and incomplete turns
    assert any(s.source == "agent" and s.is_valid_tool_call and not s.keystrokes
               for s in replay)  # and a turn with no command


def _rows(repo: Path) -> dict[str, dict[str, Any]]:
    """trial_id -> its sft and episodes columns, read back with ``datasets``, the episode's
    spans resolved against its sft messages."""
    sft = {r["trial_id"]: r for r in load_dataset(str(repo), "sft", split="train")}
    rows = {}
    for row in load_dataset(str(repo), "episodes", split="train"):
        joined = {**sft[row["trial_id"]], **row}
        joined["steps"] = resolve_steps(row["steps"], joined["messages"])
        rows[row["trial_id"]] = joined
    return rows


def _observation_kind(step: dict[str, Any]) -> str:
    text = step["observation"] or ""
    if step["is_valid_tool_call"] is False:
        return "parse-error"
    kind = "frame" if PROMPT_LINE.search(text) else "other"
    return kind + ("+confirm" if '"task_complete": true' in text else "")


def _present(steps: list[dict[str, Any]], source: str) -> set[str]:
    """The step fields that hold something in some step of ``source``."""
    return {name for step in steps if step["source"] == source
            for name, value in step.items()
            if value not in (None, [], "") and not name.endswith("_span")}


def _replies(row: dict[str, Any]) -> list[str]:
    return [m["content"] for m in row["messages"] if m["role"] == "assistant"]


def _same(native: Any, harbor: Any, what: str) -> None:
    assert native == harbor, f"{what}: native {native!r} != harbor {harbor!r}"


def test_episodes_match_an_ingested_harbor_terminus_2_trial(
        graded: dict[str, list[TrialRecord]], tmp_path: Path) -> None:
    native_repo, harbor_repo = tmp_path / "native", tmp_path / "harbor"
    native_trials = [r for run in graded.values() for r in run]
    build_trajectories(native_repo, trials=native_trials, task_roots=[ROOT / "environments"])
    assert validate_repo(native_repo, secrets=False).findings == []
    harbor_trials = ingest_harbor([HARBOR_JOB]).records[:1]
    build_trajectories(harbor_repo, trials=harbor_trials, task_roots=[ROOT / "environments"])
    native_rows = _rows(native_repo)
    assert len(native_rows) == len(native_trials) == 5
    [native] = [native_rows[r.trial_id] for r in graded["harbor-script"]]
    [harbor] = _rows(harbor_repo).values()

    _same(set(native), set(harbor), "columns")
    for column in ("scaffold", "task_id", "messages_source", "tool_definitions", "turns",
                   "reward", "passed", "result"):
        _same(native[column], harbor[column], column)
    n, h = native["steps"], harbor["steps"]
    for field in ("source", "keystrokes", "is_valid_tool_call"):
        _same([s[field] for s in n], [s[field] for s in h], f"steps' {field}")
    agent = [i for i, s in enumerate(h) if s["source"] == "agent"]
    _same([n[i]["message"] for i in agent], [h[i]["message"] for i in agent],
          "agent steps' messages (Analysis/Plan, or the reply itself)")
    _same([_observation_kind(n[i]) for i in agent], [_observation_kind(h[i]) for i in agent],
          "kinds of observation")
    for source in ("user", "agent"):
        _same(_present(n, source), _present(h, source), f"fields of {source} steps")
    for steps in (n, h):  # the prompt holds the task and the terminal's first frame
        assert load_task(TASKS[0]).instruction.strip()[:80] in steps[0]["message"]
        assert PROMPT_LINE.search(steps[0]["message"])
        assert "5 the\n3 dog\n3 fox" in steps[3]["observation"]  # the tool's output, framed
    # The sft messages: the same turns, the model's replies byte for byte.
    _same([m["role"] for m in native["messages"]], [m["role"] for m in harbor["messages"]],
          "message roles")
    _same(_replies(native), _replies(harbor), "assistant messages")
    _same(_replies(native), list(WORD_FREQUENCY_REPLIES), "the replies the endpoint sent")
    assert json.loads(native["messages"][-1]["content"])["task_complete"] is True
