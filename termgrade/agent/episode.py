"""What every scaffold's episode shares: its limits, its record, why it stopped, its clock.

Both built-in scaffolds (the bash tool-calling one, :mod:`~termgrade.agent.loop`; the
Terminus-2-style one, :mod:`~termgrade.agent.terminus_episode`) and any scaffold of yours
build on these: :class:`ScaffoldConfig` (the limits and sampling a run sets),
:class:`Transcript` (everything sent and received, the episode's steps, tokens),
:class:`StopReason` (why it ended), :class:`EpisodeClock` (the time budget: model latency and
commands count, retried requests' waits do not), :class:`EpisodeBase` (the fields every
episode takes), and what the grader gets back (:class:`AgentRun`) for a
:class:`ModelAgent`. Nothing here knows a scaffold by name.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from termgrade.agent.tokens import token_turn
from termgrade.records.trial import EpisodeStep, TokenTurn, TurnMetrics

if TYPE_CHECKING:
    from termgrade.agent.client import ChatClient, Completion, Endpoint
    from termgrade.sandbox.base import ExecResult, Sandbox
    from termgrade.task import Task

DEFAULT_AGENT_TIMEOUT_S = 600.0
"""The agent phase's limit where neither the scaffold nor task.toml's ``[agent]`` set one."""


@dataclass(frozen=True)
class ScaffoldConfig:
    """Limits of one episode. ``None`` wall clock: the task's ``[agent] timeout_sec``."""

    max_turns: int = 50
    """Model calls in all; the episode ends after this many."""
    command_timeout_s: float = 180.0
    """One ``bash`` call is killed after this (the model is told)."""
    max_output_chars: int = 16_000
    """A tool reply keeps the head and tail of longer output, with a notice."""
    wall_clock_s: float | None = None
    """Time for the whole episode, model latency and commands included, retries' waits not."""
    max_invalid_turns: int = 5
    """Consecutive turns without a valid tool call after which the episode ends."""
    temperature: float | None = 0.6
    max_tokens: int | None = None
    """Completion tokens per turn; None leaves it to the endpoint."""

    def request_params(self) -> dict[str, Any]:
        """Sampling parameters sent with every request."""
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return params


def agent_time_limit_s(task: Task, config: ScaffoldConfig) -> float:
    """The agent phase's budget: the scaffold's wall clock, else the task's ``[agent]
    timeout_sec``, else :data:`DEFAULT_AGENT_TIMEOUT_S` (grading and training alike)."""
    return config.wall_clock_s or task.config.agent.timeout_sec or DEFAULT_AGENT_TIMEOUT_S


class StopReason:
    FINISHED = "finished"
    MAX_TURNS = "max_turns"
    WALL_CLOCK = "wall_clock"
    INVALID_TURNS = "invalid_turns"
    CONTEXT_LENGTH = "context_length"
    REJECTED = "request_rejected"
    ENDPOINT_ERROR = "endpoint_error"
    SESSION_ENDED = "session_ended"
    """terminus-2: the keys ended the shell (``exit``, Ctrl+D)."""
    TERMINAL_ERROR = "terminal_error"
    """terminus-2: the tmux session failed (before the model acted: the trial is lost)."""


@dataclass
class Transcript:
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The conversation as last sent, plus the final reply: the SFT form."""
    steps: list[EpisodeStep] = field(default_factory=list)
    per_turn: list[TurnMetrics] = field(default_factory=list)
    token_turns: list[TokenTurn] = field(default_factory=list)
    """With ``Endpoint.token_detail``: each reply's tokens as the endpoint sampled them."""
    stop_reason: str = StopReason.MAX_TURNS
    endpoint_error: str | None = None
    endpoint_fatal: bool = False
    """The endpoint refuses every request (a wrong URL, model or key)."""
    rejected: str | None = None
    """Why the endpoint refused the conversation the model wrote (the episode ended)."""
    invalid_turns: int = 0
    context_trims: int = 0
    retries: int = 0
    waited_s: float = 0.0
    """Seconds spent waiting out failed requests (not part of the trial's time budget)."""
    duration_s: float = 0.0

    def total(self, key: str) -> int | None:
        values = [getattr(t, key) for t in self.per_turn if getattr(t, key) is not None]
        return sum(values) if values else None

    def add_reply(self, client: ChatClient, completion: Completion, turn: int,
                  message: dict[str, Any]) -> None:
        """Append the assistant ``message`` of ``completion``, and its tokens when the
        endpoint was asked for them."""
        if client.endpoint.token_detail is not None:
            self.token_turns.append(token_turn(completion.response, turn, len(self.messages)))
        self.messages.append(message)

    def count_request(self, completion: Completion) -> None:
        """Add a completed request's retries and the time spent waiting them out."""
        self.retries += completion.retries
        self.waited_s += completion.waited_s


@dataclass
class EpisodeClock:
    """An episode's time budget: wall time since :meth:`start`, less the waits of retried
    requests (``transcript.waited_s``), against ``limit_s``."""

    limit_s: float
    transcript: Transcript
    started: float = 0.0

    def start(self) -> None:
        self.started = time.monotonic()

    def elapsed(self) -> float:
        """Wall time since the start, waits included (the transcript's ``duration_s``)."""
        return time.monotonic() - self.started

    def used(self) -> float:
        """The budget used: wall time less the waits of retried requests."""
        return self.elapsed() - self.transcript.waited_s

    def left(self) -> float:
        return self.limit_s - self.used()

    def stop(self) -> None:
        """Record the episode's duration on its transcript."""
        self.transcript.duration_s = self.elapsed()


@dataclass
class EpisodeBase:
    """The fields every scaffold's episode takes, and its clock (started by ``run``)."""

    client: ChatClient
    sandbox: Sandbox
    instruction: str
    workdir: str
    config: ScaffoldConfig
    time_limit_s: float
    env: dict[str, str] | None = None
    transcript: Transcript = field(default_factory=Transcript)
    clock: EpisodeClock = field(init=False)

    def __post_init__(self) -> None:
        self.clock = EpisodeClock(self.time_limit_s, self.transcript)

    def run(self) -> Transcript:
        raise NotImplementedError


@dataclass(frozen=True)
class ModelAgent:
    """A model driving a registered scaffold (:mod:`termgrade.agent.scaffolds`; the bash
    tool-calling one unless ``scaffold`` names another). Picklable (a Ray worker opens its
    own client for ``endpoint``)."""

    endpoint: Endpoint
    config: ScaffoldConfig
    scaffold: str = "bash-tool"
    """The registry name of the scaffold that drives the episode."""

    @property
    def name(self) -> str:
        return self.endpoint.model


@dataclass(frozen=True)
class AgentRun:
    result: ExecResult | None
    """None for the nop agent, which runs nothing, and for a model agent."""
    error: str | None = None
    transcript: Transcript | None = None
    """A model agent's whole episode."""
    infrastructure_error: str | None = None
    """Why the trial is lost, not scored, in a sentence that names the part that failed
    (the model's endpoint stopped answering; the agent's container had no terminal)."""

    @property
    def duration_s(self) -> float:
        if self.transcript is not None:
            return self.transcript.duration_s
        return self.result.duration_s if self.result else 0.0


def endpoint_failure(transcript: Transcript) -> str | None:
    """The lost trial's reason when the model's endpoint stopped answering, else None."""
    if transcript.endpoint_error is None:
        return None
    return f"the model endpoint: {transcript.endpoint_error}"

