"""The bash tool-calling scaffold against scripted stand-ins, in real containers.

Each policy is a scripted stand-in behind a real OpenAI-compatible server on loopback
(tests/support/scripted_tools.py); the trial runs through the real grader
(:func:`termgrade.scoring.trial.run_task`) on the word-frequency task. The reference
solution replayed as tool calls passes; giving up, malformed calls and every cheating
policy score 0; infrastructure faults are retried and never change the outcome.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig, StopReason
from termgrade.agent.client import ChatClient
from termgrade.agent.errors import EndpointError
from termgrade.agent.kinds import ModelAgent
from termgrade.core.retry import RetryPolicy
from termgrade.grade.record import graded_record
from termgrade.records.trial import TrialRecord
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import Task, load_task
from tests.support.scripted_tools import (
    CHEATING_POLICIES,
    Fault,
    FaultPlan,
    ScriptedToolEndpoint,
    commands,
    give_up,
    malformed,
    policies,
    replay_solution,
)

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def task() -> Task:
    return load_task(TASK)


@pytest.fixture(scope="module")
def image(task: Task) -> str:
    return build_task_image(task).tag


def _trial(task: Task, image: str, endpoint: ScriptedToolEndpoint,
           config: ScaffoldConfig | None = None) -> tuple[RunOutcome, TrialRecord]:
    agent = ModelAgent(Endpoint(endpoint.url, endpoint.model, api_key_env=None),
                       config or ScaffoldConfig())
    outcome = run_task(task, image, agent)
    now = datetime.now(UTC)
    return outcome, graded_record(task_id=task.task_id, model=agent.name, attempt=0,
                                  retry_index=0, outcome=outcome, started_at=now,
                                  finished_at=now)


def test_the_reference_solution_replayed_as_tool_calls_passes(task: Task, image: str) -> None:
    with ScriptedToolEndpoint(replay_solution(task.paths.solve_script.read_text())) as llm:
        outcome, record = _trial(task, image, llm)
    assert (outcome.reward, outcome.error, outcome.failure) == (1.0, None, None)
    assert (record.counted, record.passed, record.scaffold) == (True, True, "bash-tool")
    assert record.n_tests_passed == 17 and record.n_tests_failed == 0
    assert record.messages is not None and record.messages_source == "chat"
    roles = [m.role for m in record.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    call = record.messages[2].tool_calls
    assert call is not None and call[0].function.name == "bash"
    assert record.messages[3].tool_call_id == call[0].id
    assert record.messages[3].content is not None
    assert record.messages[3].content.startswith("[exit status 0]")
    # what the endpoint received is exactly what the record keeps (the SFT form)
    sent = llm.requests[-1]["messages"]
    kept = [m.model_dump(exclude_none=True) for m in record.messages[:len(sent)]]
    assert kept == [{k: v for k, v in m.items() if v is not None} for m in sent]
    assert [t["function"]["name"] for t in llm.requests[0]["tools"]] == ["bash", "finish"]
    assert record.turns == 2 and len(record.per_turn) == 2 and record.input_tokens
    assert record.episode is not None and record.episode[0].keystrokes


def test_giving_up_scores_zero_and_counts(task: Task, image: str) -> None:
    with ScriptedToolEndpoint(give_up()) as llm:
        outcome, record = _trial(task, image, llm)
    assert outcome.reward == 0.0 and outcome.error is None
    assert (record.counted, record.passed, record.turns) == (True, False, 1)
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.stop_reason == StopReason.FINISHED


def test_malformed_tool_calls_are_answered_counted_as_invalid_and_score_zero(
        task: Task, image: str) -> None:
    with ScriptedToolEndpoint(malformed()) as llm:
        outcome, record = _trial(task, image, llm)
    assert outcome.reward == 0.0 and record.counted
    assert record.episode is not None
    valid = [step.is_valid_tool_call for step in record.episode]
    assert valid.count(False) >= 4 and valid[-1] is True  # the final finish is valid
    replies = [m.content or "" for m in record.messages or [] if m.role in ("tool", "user")]
    assert any("not valid JSON" in r for r in replies)
    assert any("there is no tool" in r for r in replies)
    assert any("`command`" in r for r in replies)
    assert any("no tool call" in r for r in replies)


def test_invalid_turns_end_the_episode_after_the_limit(task: Task, image: str) -> None:
    from tests.support.scripted_tools import sequence, text_reply

    chatter = sequence(text_reply("thinking..."), then=text_reply("still thinking"))
    with ScriptedToolEndpoint(chatter) as llm:
        outcome, record = _trial(task, image, llm, ScaffoldConfig(max_invalid_turns=3))
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.stop_reason == StopReason.INVALID_TURNS
    assert len(llm.requests) == 3 and record.counted and record.reward == 0.0


def test_rate_limits_server_errors_and_dropped_connections_are_retried_not_counted(
        task: Task, image: str) -> None:
    plan = FaultPlan(at={1: Fault.rate_limit(1), 2: Fault.server_error(),
                         3: Fault.drop(), 5: Fault.unavailable()})
    with ScriptedToolEndpoint(replay_solution(task.paths.solve_script.read_text()),
                              faults=plan) as llm:
        outcome, record = _trial(task, image, llm)
    assert outcome.reward == 1.0 and record.counted and record.passed
    assert len(llm.requests) == 6  # 2 answered turns + 4 faults
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.retries == 4
    assert transcript.waited_s >= 1.0  # Retry-After obeyed, and kept out of the budget
    assert record.http_retries == 4  # the trial record keeps the count


def test_retries_do_not_burn_the_time_budget(task: Task, image: str) -> None:
    """Five 429s with Retry-After 1 s against a 3 s budget: still finishes and passes."""
    plan = FaultPlan(at={n: Fault.rate_limit(1) for n in range(1, 6)})
    with ScriptedToolEndpoint(replay_solution(task.paths.solve_script.read_text()),
                              faults=plan) as llm:
        outcome, _ = _trial(task, image, llm, ScaffoldConfig(wall_clock_s=3.0))
    assert outcome.reward == 1.0


def test_a_slow_model_runs_out_of_its_wall_clock_and_is_graded(task: Task, image: str) -> None:
    plan = FaultPlan(when=[(lambda n, body: True, Fault.slow(1.5))])
    with ScriptedToolEndpoint(commands("ls", "ls", "ls", "ls"), faults=plan) as llm:
        outcome, record = _trial(task, image, llm, ScaffoldConfig(wall_clock_s=2.0))
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.stop_reason == StopReason.WALL_CLOCK
    assert record.counted and record.reward == 0.0 and record.agent_timed_out


def test_context_overflow_elides_old_tool_outputs_then_ends(task: Task, image: str) -> None:
    big = "head -c 6000 /dev/zero | tr '\\0' x"
    plan = FaultPlan(max_context_tokens=3000)
    with ScriptedToolEndpoint(commands(big, big, big, big, big), faults=plan) as llm:
        outcome, record = _trial(task, image, llm)
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    assert transcript is not None and transcript.context_trims >= 1
    assert any(m.content == "[output elided to fit the model's context window]"
               for m in record.messages or [])
    assert record.counted and record.reward == 0.0


def test_long_output_is_truncated_with_a_notice(task: Task, image: str) -> None:
    with ScriptedToolEndpoint(commands("seq 1 100000")) as llm:
        _, record = _trial(task, image, llm, ScaffoldConfig(max_output_chars=2000))
    [reply] = [m.content or "" for m in record.messages or [] if m.role == "tool"][:1]
    assert "[output truncated:" in reply and "100000" in reply and len(reply) < 2300


def test_a_command_past_its_timeout_is_killed_and_the_model_told(task: Task,
                                                                   image: str) -> None:
    with ScriptedToolEndpoint(commands("sleep 30 & echo started; sleep 20")) as llm:
        _, record = _trial(task, image, llm, ScaffoldConfig(command_timeout_s=2))
    reply = next(m.content or "" for m in record.messages or [] if m.role == "tool")
    assert reply.startswith("[command timed out after 2 s") and "started" in reply


def test_an_endpoint_that_stays_down_loses_the_trial_unscored(task: Task, image: str) -> None:
    plan = FaultPlan(when=[(lambda n, body: True, Fault.server_error())])
    with ScriptedToolEndpoint(give_up(), faults=plan) as llm:
        endpoint = Endpoint(llm.url, llm.model, api_key_env=None)
        client = ChatClient(endpoint, retry=RetryPolicy(attempts=3, base_s=0.1))
        with pytest.raises(EndpointError):
            client.complete([{"role": "user", "content": "hi"}], [])
        import termgrade.agent.client as module

        module._CLIENTS[endpoint] = client
        try:
            outcome, record = _trial(task, image, llm)
        finally:
            module._CLIENTS.pop(endpoint, None)
    assert outcome.reward is None and outcome.error and "model endpoint" in outcome.error
    assert (record.counted, record.reward, record.exception_type) == (
        False, None, "InfrastructureError")


@pytest.mark.parametrize("name", CHEATING_POLICIES)
def test_every_cheating_policy_scores_zero(task: Task, image: str, name: str) -> None:
    with ScriptedToolEndpoint(policies[name]()) as llm:
        outcome, record = _trial(task, image, llm)
    assert outcome.error is None, outcome.error
    assert record.counted and record.reward == 0.0 and not record.passed, (
        name, outcome.failure, json.dumps([m.content for m in record.messages or []])[-2000:])
