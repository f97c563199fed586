"""The Terminus-2-style scaffold in real containers, against scripted stand-ins.

The tmux session (termgrade/agent/tmux.py) is driven directly in a container of the
word-frequency task's image; whole trials run through the real grader
(:func:`termgrade.scoring.trial.run_task`) with the scaffold talking to a scripted policy
behind a real OpenAI-compatible server on loopback (tests/support/scripted_terminus.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig, StopReason
from termgrade.agent.kinds import ModelAgent
from termgrade.agent.terminus_prompt import CONFIRM, NEW_OUTPUT
from termgrade.agent.tmux import MAX_SEND_BYTES, TmuxSession
from termgrade.grade.record import graded_record
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.docker_sandbox import DockerSandbox
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import Task, load_task
from tests.support.scripted_terminus import SOLVED, give_up, keys, replay_solution
from tests.support.scripted_tools import ScriptedToolEndpoint

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def task() -> Task:
    return load_task(TASK)


@pytest.fixture(scope="module")
def image(task: Task) -> str:
    return build_task_image(task).tag


@pytest.fixture
def session(image: str) -> Iterator[TmuxSession]:
    box = DockerSandbox.start(image)
    try:
        terminal = TmuxSession(box, "/app", {"GREETING": "hello from env"})
        terminal.start()
        yield terminal
    finally:
        box.close()


def _settle(seconds: float = 0.5) -> None:
    time.sleep(seconds)


def test_keys_run_in_one_shell_and_frames_show_only_what_is_new(session: TmuxSession) -> None:
    first = session.frame()
    assert "/app#" in first
    session.send("cd /tmp && X=41 && echo \"$GREETING\"\n")
    _settle()
    frame = session.frame()
    assert frame.startswith(NEW_OUTPUT) and "hello from env" in frame
    session.send("echo $((X + 1)) $PWD\n")  # the same shell: its variables and cwd stay
    _settle()
    frame = session.frame()
    assert "42 /tmp" in frame and "hello from env" not in frame


def test_a_key_name_is_a_key_and_long_keystrokes_are_pasted(session: TmuxSession) -> None:
    session.frame()
    session.send("sleep 60\n")
    _settle()
    session.send("C-c")  # Ctrl+C: the sleep is interrupted, the prompt comes back
    _settle()
    session.send("echo after-interrupt\n")
    _settle()
    assert "after-interrupt" in session.frame()
    body = "y" * (MAX_SEND_BYTES + 2000)
    session.send(f"printf %s {body} | wc -c\n")
    _settle(1.0)
    assert f"\n{len(body)}\n" in session.frame()


def test_stop_ends_the_server_and_the_jobs_of_its_shell(session: TmuxSession) -> None:
    session.send("sleep 300 &\n")
    _settle()
    box = session.sandbox

    def processes() -> list[str]:
        return box.exec(["ps", "-eo", "args"], timeout_s=10).output.splitlines()

    before = processes()
    assert any(p.startswith("tmux") for p in before) and "sleep 300" in before
    session.stop()
    _settle()
    after = processes()
    assert not any(p.startswith("tmux") for p in after) and "sleep 300" not in after
    assert not session.alive()


def _trial(task: Task, image: str, endpoint: ScriptedToolEndpoint,
           config: ScaffoldConfig | None = None) -> tuple[RunOutcome, TrialRecord]:
    agent = ModelAgent(Endpoint(endpoint.url, endpoint.model, api_key_env=None),
                       config or ScaffoldConfig(), "terminus-2")
    outcome = run_task(task, image, agent)
    now = datetime.now(UTC)
    return outcome, graded_record(task_id=task.task_id, model=agent.name, attempt=0,
                                  retry_index=0, outcome=outcome, started_at=now,
                                  finished_at=now, scaffold="terminus-2")


def test_the_solution_replayed_as_keystrokes_passes_through_bad_turns(task: Task,
                                                                      image: str) -> None:
    with ScriptedToolEndpoint(replay_solution(task.paths.solve_script.read_text())) as llm:
        outcome, record = _trial(task, image, llm)
    assert (outcome.reward, outcome.error, outcome.failure) == (1.0, None, None)
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.stop_reason == StopReason.FINISHED
    assert "tools" not in llm.requests[0]  # the turn format is text, not tool calls
    steps = record.episode or []
    assert steps[0].source == "user" and task.instruction.strip() in steps[0].message
    agent_steps = steps[1:]
    assert all(s.source == "agent" for s in agent_steps) and record.turns == len(agent_steps)
    assert [s.is_valid_tool_call for s in agent_steps[:4]] == [True, False, False, False]
    assert agent_steps[0].keystrokes == ["ls -la\n"]
    assert agent_steps[1].observation.startswith("Your last reply could not be used")
    assert "missing required fields: plan" in agent_steps[3].observation
    assert len(agent_steps[4].keystrokes) == 2 and agent_steps[5].keystrokes == []
    assert any(SOLVED.search(s.observation) for s in agent_steps)
    assert CONFIRM in agent_steps[-2].observation  # asked to confirm, then confirmed
    assert agent_steps[-1].message.startswith("Analysis: Confirmed")
    # The chat messages: user / assistant in turn, exactly as the endpoint received them,
    # and the final reply after them.
    messages = record.messages or []
    assert [m.role for m in messages] == ["user", "assistant"] * len(agent_steps)
    sent = llm.requests[-1]["messages"]
    assert [m.model_dump(exclude_none=True) for m in messages[:len(sent)]] == sent
    assert messages[0].content == steps[0].message
    assert len(record.per_turn) == record.turns and record.input_tokens


def test_giving_up_scores_zero_and_counts(task: Task, image: str) -> None:
    with ScriptedToolEndpoint(give_up()) as llm:
        outcome, record = _trial(task, image, llm)
    assert outcome.reward == 0.0 and outcome.error is None
    assert (record.counted, record.passed, record.turns) == (True, False, 2)
    # The scaffold's own traces (tmux's socket, the shell's history) stay out of the
    # container's writable layer: nothing is left out of the transfer set.
    assert record.left_out is None


def test_exiting_the_shell_ends_the_episode_and_it_is_still_graded(task: Task,
                                                                   image: str) -> None:
    with ScriptedToolEndpoint(keys(("exit\n", 0.3), ("ls\n", 0.1))) as llm:
        outcome, record = _trial(task, image, llm)
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.stop_reason == StopReason.SESSION_ENDED
    assert record.counted and record.reward == 0.0 and record.turns == 1


def test_durations_are_bounded_by_the_wall_clock(task: Task, image: str) -> None:
    began = time.monotonic()
    with ScriptedToolEndpoint(keys(("sleep 100\n", 50.0), ("ls\n", 50.0))) as llm:
        outcome, record = _trial(task, image, llm, ScaffoldConfig(wall_clock_s=3.0))
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.stop_reason == StopReason.WALL_CLOCK
    assert record.agent_timed_out and record.counted and record.reward == 0.0
    assert transcript.duration_s < 10 and time.monotonic() - began < 120


def test_unusable_replies_in_a_row_end_the_episode(task: Task, image: str) -> None:
    from tests.support.scripted_tools import Reply

    with ScriptedToolEndpoint(lambda messages: Reply("not json at all")) as llm:
        outcome, record = _trial(task, image, llm, ScaffoldConfig(max_invalid_turns=3))
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.stop_reason == StopReason.INVALID_TURNS
    assert len(llm.requests) == 3 and record.counted and record.reward == 0.0
    assert [s.is_valid_tool_call for s in (record.episode or [])[1:]] == [False] * 3


def test_a_container_without_tmux_loses_the_trial_before_the_model_is_asked(
        task: Task, image: str) -> None:
    from termgrade.agent.scaffolds import scaffold_for

    box = DockerSandbox.start(image)
    try:
        removed = box.exec(["sh", "-c", "rm -f \"$(command -v tmux)\" && ! command -v tmux"],
                           timeout_s=30)
        assert removed.exit_code == 0, removed.output
        with ScriptedToolEndpoint(give_up()) as llm:
            agent = ModelAgent(Endpoint(llm.url, llm.model, api_key_env=None),
                               ScaffoldConfig(), "terminus-2")
            run = scaffold_for("terminus-2").run(agent, box, task)
    finally:
        box.close()
    assert run.infrastructure_error is not None and "no tmux" in run.infrastructure_error
    assert "termgrade/base" in run.infrastructure_error  # the fix
    # the container is to blame, not the model endpoint
    assert run.infrastructure_error.startswith("no terminal for the agent")
    assert run.transcript is not None
    assert run.transcript.stop_reason == StopReason.TERMINAL_ERROR
    assert llm.requests == []


def test_a_long_frame_keeps_its_head_and_tail_with_a_notice(task: Task, image: str) -> None:
    with ScriptedToolEndpoint(keys(("seq 1 30000\n", 1.0))) as llm:
        _, record = _trial(task, image, llm, ScaffoldConfig(max_output_chars=2000))
    frame = (record.episode or [])[1].observation
    assert "[output truncated:" in frame and len(frame) < 2300
    assert "seq 1 30000" in frame and "\n30000\n" in frame  # the command, and the end
