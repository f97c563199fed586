"""One episode of the Terminus-2-style scaffold: JSON turns typed into a tmux session.

The episode opens a tmux session in the agent's container (:mod:`termgrade.agent.tmux`)
and sends the model :func:`~termgrade.agent.terminus_prompt.first_prompt` (the JSON turn
format, the task, the terminal's first frame) as the one user message. Each turn: the
whole conversation goes to the endpoint; the reply is parsed
(:func:`~termgrade.agent.terminus_turns.parse_turn`); a reply with an error runs nothing
and its error is the next user message; otherwise each command's keystrokes are typed and
the episode waits the command's ``duration`` (at most :data:`MAX_WAIT_S`, the
``--command-timeout`` and the time left), then the terminal's frame is the next user
message. ``task_complete`` is asked to be confirmed; a second one in a row ends the
episode. It also ends at the turn limit, the wall clock (model latency and waits count,
retried requests' waits do not), after ``max_invalid_turns`` unusable replies in a row,
when the shell's session is gone, when the conversation no longer fits the model's
context, or when the endpoint refuses it. The session is killed at the end: nothing the
scaffold started runs on while the grader takes over.

What is recorded (:class:`~termgrade.agent.episode.Transcript`) is the episode form an
ingested Harbor Terminus-2 trial has: a ``user`` step with the first prompt, then one
``agent`` step per reply (``Analysis: ...\\nPlan: ...`` or, for an unusable reply, the
reply itself; every keystroke batch typed; the next user message as its observation;
whether it parsed; tokens; a timestamp), and the chat messages exactly as sent, with the
final reply.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from termgrade.agent.client import Completion
from termgrade.agent.episode import EpisodeBase, ScaffoldConfig, StopReason, Transcript
from termgrade.agent.errors import (
    ContextLengthError,
    EndpointError,
    RequestRejected,
    TerminalError,
)
from termgrade.agent.terminus_prompt import (
    SESSION_GONE,
    confirmation,
    first_prompt,
    limit_frame,
    parse_error,
    with_warnings,
)
from termgrade.agent.terminus_turns import Turn, parse_turn
from termgrade.agent.tmux import TmuxSession
from termgrade.records.trial import EpisodeStep, TurnMetrics

MAX_WAIT_S = 60.0
"""The longest a command's ``duration`` is honoured (the model is told)."""


def max_wait_s(config: ScaffoldConfig) -> float:
    return min(MAX_WAIT_S, config.command_timeout_s)


@dataclass
class TerminusEpisode(EpisodeBase):
    """Runs one episode; see the module docstring."""

    terminal_error: str | None = None
    """Why the tmux session failed, when it did (the episode then ended)."""
    lost: str | None = None
    """Why the trial is lost to the container, not the model (no terminal to type into)."""

    def run(self) -> Transcript:
        script = self.transcript
        self.clock.start()
        session = TmuxSession(self.sandbox, self.workdir, dict(self.env or {}))
        try:
            try:
                session.start()
            except TerminalError as exc:  # before the model acted: the image's fault
                raise TerminalError(f"no terminal for the agent: {exc}", lost=True) from exc
            self._loop(session)
        except RequestRejected as exc:
            script.stop_reason, script.rejected = StopReason.REJECTED, str(exc)
        except EndpointError as exc:
            script.stop_reason = StopReason.ENDPOINT_ERROR
            script.endpoint_error, script.endpoint_fatal = str(exc), exc.fatal
            script.retries += exc.retries
        except TerminalError as exc:
            self.terminal_error = str(exc)
            script.stop_reason = StopReason.TERMINAL_ERROR
            if exc.lost:  # the trial is lost to infrastructure, not scored
                self.lost = str(exc)
        finally:
            session.stop()
        self.clock.stop()
        return script

    def _loop(self, session: TmuxSession) -> None:
        script = self.transcript
        prompt = first_prompt(self.instruction, self._frame(session), workdir=self.workdir,
                              max_turns=self.config.max_turns,
                              max_wait_s=max_wait_s(self.config))
        script.steps.append(EpisodeStep(index=0, source="user", message=prompt,
                                        timestamp=datetime.now(UTC)))
        pending_completion = False
        invalid_in_a_row = 0
        for turn in range(self.config.max_turns):
            if self.clock.left() <= 0:
                script.stop_reason = StopReason.WALL_CLOCK
                return
            script.messages.append({"role": "user", "content": prompt})
            began = time.monotonic()
            completion = self._complete()
            if completion is None:
                return
            content = completion.message.get("content")
            reply = content if isinstance(content, str) else ""
            script.add_reply(self.client, completion, turn, _assistant(completion.message, reply))
            parsed = parse_turn(reply)
            if not parsed.valid:
                script.invalid_turns += 1
                invalid_in_a_row += 1
                prompt = parse_error(str(parsed.error), parsed.warnings)
                self._record(turn, reply, parsed, [], prompt, completion, began)
                if invalid_in_a_row >= self.config.max_invalid_turns:
                    script.stop_reason = StopReason.INVALID_TURNS
                    return
                continue
            invalid_in_a_row = 0
            typed = self._type(session, parsed)
            if not session.alive():  # the keys ended the shell (exit, C-d), or a job did
                self._record(turn, reply, parsed, typed, SESSION_GONE, completion, began)
                script.stop_reason = StopReason.SESSION_ENDED
                return
            frame = self._frame(session)
            confirmed = parsed.task_complete and pending_completion
            if confirmed:
                prompt = frame
            elif parsed.task_complete:
                prompt = confirmation(frame)
            else:
                prompt = with_warnings(frame, parsed.warnings)
            pending_completion = parsed.task_complete
            self._record(turn, reply, parsed, typed, prompt, completion, began)
            if confirmed:
                script.stop_reason = StopReason.FINISHED
                return
        script.stop_reason = StopReason.MAX_TURNS

    def _complete(self) -> Completion | None:
        """The next reply; None when the conversation no longer fits the context."""
        script = self.transcript
        try:
            completion = self.client.complete(script.messages, (),
                                              self.config.request_params())
        except ContextLengthError:
            script.stop_reason = StopReason.CONTEXT_LENGTH
            return None
        script.count_request(completion)
        return completion

    def _type(self, session: TmuxSession, turn: Turn) -> list[str]:
        """Send each command's keys and wait its duration, within the time left; the
        keystrokes actually sent."""
        typed: list[str] = []
        for command in turn.commands:
            if self.clock.left() <= 0:
                break
            session.send(command.keys)
            typed.append(command.keys)
            wait = min(command.duration_s, max_wait_s(self.config), max(0.0, self.clock.left()))
            if wait > 0:
                time.sleep(wait)
        return typed

    def _frame(self, session: TmuxSession) -> str:
        return limit_frame(session.frame(), self.config.max_output_chars)

    def _record(self, turn: int, reply: str, parsed: Turn, typed: list[str],
                observation: str, completion: Completion, began: float) -> None:
        script = self.transcript
        tokens = {"input_tokens": completion.usage("prompt_tokens"),
                  "output_tokens": completion.usage("completion_tokens"),
                  "cached_tokens": completion.usage("cached_tokens")}
        script.steps.append(EpisodeStep(
            index=len(script.steps), source="agent", message=parsed.step_message(reply),
            keystrokes=typed, observation=observation, is_valid_tool_call=parsed.valid,
            timestamp=datetime.now(UTC), **tokens))
        took = time.monotonic() - began - completion.waited_s
        script.per_turn.append(TurnMetrics(turn=turn, duration_s=max(0.0, took), **tokens))


def _assistant(message: dict[str, Any], reply: str) -> dict[str, Any]:
    """The assistant message as a chat template reads it: the reply's text (and the
    model's separate reasoning, when the endpoint returns one)."""
    kept: dict[str, Any] = {"role": "assistant", "content": reply}
    if message.get("reasoning_content"):
        kept["reasoning_content"] = message["reasoning_content"]
    return kept
