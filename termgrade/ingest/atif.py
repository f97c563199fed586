"""Reading ``agent/trajectory.json`` (ATIF v1.x, the Agent Trajectory Interchange Format).

An ATIF trajectory is a list of steps, each from ``user``, ``system`` or ``agent``; an
agent step carries the model's message, its tool calls (Terminus-2 records each keystroke
batch as a ``bash_command`` call and completion as ``mark_task_complete``), the
observation that followed, and token metrics. Steps marked ``is_copied_context`` repeat
earlier context after a summarization and are left out. Continuation files
(``trajectory.cont-N.json``) are appended in order.

Chat messages: user steps are user turns; an agent step is the assistant turn and its
observation is the next user turn (the last observation was never sent to the model);
a system step becomes a system message only when it opens the trajectory. Terminus-2
stores an agent turn as ``Analysis: ...\\nPlan: ...`` unless run with
``trajectory_config.raw_content``; such turns are re-serialized into its JSON reply
format (``messages_source = "atif-rebuilt"``), while raw turns and unparsable replies
are kept verbatim. Other agents' turns are their message text, verbatim.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from termgrade.ingest.harbor_layout import read_json
from termgrade.ingest.transcript import (
    PARSE_ERROR_PREFIX,
    LoggedTranscript,
    parse_terminus_reply,
    rebuild_terminus_reply,
    reply_keystrokes,
    split_analysis_plan,
    text_of,
)
from termgrade.records import ChatMessage, EpisodeStep, TurnMetrics


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AtifToolCall(_Lenient):
    function_name: str
    arguments: dict[str, Any] = {}


class AtifObservationResult(_Lenient):
    content: Any = None


class AtifObservation(_Lenient):
    results: list[AtifObservationResult] = []


class AtifMetrics(_Lenient):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None


class AtifStep(_Lenient):
    step_id: int
    source: str
    timestamp: datetime | None = None
    message: Any = ""
    tool_calls: list[AtifToolCall] | None = None
    observation: AtifObservation | None = None
    metrics: AtifMetrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = None

    def observation_text(self) -> str:
        if self.observation is None:
            return ""
        return "\n".join(text_of(r.content) for r in self.observation.results
                         if r.content is not None)

    def keystrokes(self) -> list[str]:
        calls = self.tool_calls or []
        if calls:
            return [str(c.arguments.get("keystrokes", "")) for c in calls
                    if c.function_name == "bash_command"]
        reply = parse_terminus_reply(text_of(self.message))
        return reply_keystrokes(reply) if reply else []


class AtifAgent(_Lenient):
    name: str = ""


class AtifTrajectory(_Lenient):
    schema_version: str
    agent: AtifAgent = AtifAgent()
    steps: list[AtifStep]

    def is_terminus(self) -> bool:
        return self.agent.name.startswith("terminus")


def read_trajectory(path: Path) -> AtifTrajectory:
    """One ATIF file. OSError / ValueError (pydantic's included) when unreadable."""
    trajectory = AtifTrajectory.model_validate(read_json(path))
    if not trajectory.schema_version.startswith("ATIF-v1."):
        raise ValueError(f"unsupported ATIF version {trajectory.schema_version!r}")
    return trajectory


def _assistant_content(step: AtifStep, terminus: bool) -> tuple[str, bool]:
    """The assistant turn as the model wrote it, and whether it had to be rebuilt."""
    message = text_of(step.message)
    if not terminus:
        return message, False
    parts = split_analysis_plan(message)
    calls = step.tool_calls or []
    if parts is None and (calls or message == ""):
        parts = (message, "") if message else ("", "")
    if parts is None:
        return message, False
    commands = [{"keystrokes": c.arguments.get("keystrokes", ""),
                 "duration": c.arguments.get("duration", 1.0)}
                for c in calls if c.function_name == "bash_command"]
    complete = any(c.function_name == "mark_task_complete" for c in calls)
    return rebuild_terminus_reply(parts[0], parts[1], commands, complete), True


def _messages(steps: list[AtifStep], terminus: bool) -> tuple[list[ChatMessage], bool]:
    messages: list[ChatMessage] = []
    pending: str | None = None
    rebuilt = False
    for i, step in enumerate(steps):
        if step.source == "agent":
            if pending is not None:
                messages.append(ChatMessage(role="user", content=pending))
            content, was_rebuilt = _assistant_content(step, terminus)
            rebuilt = rebuilt or was_rebuilt
            messages.append(ChatMessage(role="assistant", content=content))
            pending = step.observation_text() if step.observation else None
        elif step.source == "user":
            pending = None
            messages.append(ChatMessage(role="user", content=text_of(step.message)))
        elif step.source == "system" and i == 0:
            messages.append(ChatMessage(role="system", content=text_of(step.message)))
    return messages, rebuilt


def _episode(steps: list[AtifStep]) -> tuple[list[EpisodeStep], list[TurnMetrics]]:
    episode: list[EpisodeStep] = []
    per_turn: list[TurnMetrics] = []
    previous: datetime | None = None
    for index, step in enumerate(steps):
        metrics = step.metrics or AtifMetrics()
        observation = step.observation_text()
        is_agent = step.source == "agent"
        episode.append(EpisodeStep(
            index=index, source=step.source, message=text_of(step.message),
            keystrokes=step.keystrokes() if is_agent else [], observation=observation,
            is_valid_tool_call=(not observation.startswith(PARSE_ERROR_PREFIX))
            if is_agent else None,
            input_tokens=metrics.prompt_tokens, output_tokens=metrics.completion_tokens,
            cached_tokens=metrics.cached_tokens, timestamp=step.timestamp))
        if is_agent and step.llm_call_count != 0:
            # A turn's wall time: from the step before it (its prompt) to this step,
            # which Terminus-2 records after the model replied and the keys ran.
            duration = None
            if previous is not None and step.timestamp is not None:
                duration = max(0.0, (step.timestamp - previous).total_seconds())
            per_turn.append(TurnMetrics(
                turn=len(per_turn), input_tokens=metrics.prompt_tokens,
                output_tokens=metrics.completion_tokens, cached_tokens=metrics.cached_tokens,
                duration_s=duration))
        previous = step.timestamp or previous
    return episode, per_turn


def read_atif(paths: list[Path]) -> LoggedTranscript:
    """The transcript of trajectory.json and its continuations (``paths`` in order)."""
    trajectories = [read_trajectory(path) for path in paths]
    steps = [step for t in trajectories for step in t.steps if not step.is_copied_context]
    messages, rebuilt = _messages(steps, any(t.is_terminus() for t in trajectories))
    episode, per_turn = _episode(steps)
    return LoggedTranscript(
        messages=messages, messages_source="atif-rebuilt" if rebuilt else "atif",
        episode=episode, per_turn=per_turn, turns=len(per_turn))
