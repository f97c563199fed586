"""One episode of the bash tool-calling scaffold: the model, its tools, its limits.

Each turn sends the whole conversation, reads the assistant message, runs its tool calls
in the agent's container and answers each with a ``tool`` message. The episode ends when
the model calls ``finish``, at the turn limit, at the wall-clock limit (model latency and
commands count; the waits of retried requests do not), after too many turns in a row with
no valid tool call, or when the conversation no longer fits the model's context even with
old tool outputs elided, or when the endpoint refuses the conversation (400) for what the
model wrote in it. Everything sent and received is kept in the :class:`Transcript`; an
endpoint that stops answering marks it ``endpoint_error`` (the trial is then lost to
infrastructure, not scored).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from termgrade.agent.client import Completion
from termgrade.agent.episode import EpisodeBase
from termgrade.agent.episode import StopReason as StopReason  # their old home
from termgrade.agent.episode import Transcript as Transcript
from termgrade.agent.errors import ContextLengthError, EndpointError, RequestRejected
from termgrade.agent.scaffold import (
    BASH_TOOL,
    FINISH_TOOL,
    TOOLS,
    first_messages,
    truncate_output,
)
from termgrade.agent.shell import run_command
from termgrade.records.trial import EpisodeStep, TurnMetrics

NO_TOOL_CALL = ("Your reply had no tool call. Use the `bash` tool to run a command, or call "
                "`finish` when the task is done.")
ELIDED = "[output elided to fit the model's context window]"
KEEP_RECENT_TOOL_OUTPUTS = 1


@dataclass
class _Call:
    id: str
    name: str
    arguments: dict[str, Any] | None
    problem: str | None


def _parse_calls(message: dict[str, Any]) -> list[_Call]:
    calls = []
    for index, raw in enumerate(message.get("tool_calls") or []):
        raw = raw if isinstance(raw, dict) else {}
        function = raw.get("function")
        function = function if isinstance(function, dict) else {}
        name = str(function.get("name") or "")
        call_id = str(raw.get("id") or f"call_{index}")
        text = function.get("arguments")
        arguments: dict[str, Any] | None = None
        problem = None
        try:
            parsed = json.loads(text) if isinstance(text, str) and text.strip() else {}
            arguments = parsed if isinstance(parsed, dict) else None
            if arguments is None:
                problem = "arguments must be a JSON object"
        except json.JSONDecodeError as exc:
            problem = f"arguments are not valid JSON ({exc.msg} at {exc.pos})"
        if problem is None and name == BASH_TOOL:
            command = (arguments or {}).get("command")
            if not isinstance(command, str) or not command.strip():
                problem = "`command` (a non-empty string) is required"
        elif problem is None and name != FINISH_TOOL:
            problem = f"there is no tool {name!r}; the tools are `bash` and `finish`"
        calls.append(_Call(call_id, name, arguments, problem))
    return calls


def _assistant(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant message in the chat-template form: the keys a template reads."""
    kept: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    for key in ("tool_calls", "reasoning_content"):
        if message.get(key):
            kept[key] = message[key]
    return kept


def _elide_oldest(messages: list[dict[str, Any]]) -> bool:
    """Replace the oldest long tool output (not among the most recent) by a stub."""
    tools = [m for m in messages if m.get("role") == "tool"]
    for message in tools[:-KEEP_RECENT_TOOL_OUTPUTS] if len(tools) > KEEP_RECENT_TOOL_OUTPUTS \
            else []:
        if message.get("content") != ELIDED and len(str(message.get("content"))) > len(ELIDED):
            message["content"] = ELIDED
            return True
    return False


@dataclass
class Episode(EpisodeBase):
    """Runs one episode; see the module docstring."""

    def run(self) -> Transcript:
        script = self.transcript
        script.messages = first_messages(self.instruction, self.workdir, self.config)
        self.clock.start()
        consecutive_invalid = 0
        try:
            for turn in range(self.config.max_turns):
                if self.clock.left() <= 0:
                    script.stop_reason = StopReason.WALL_CLOCK
                    break
                completion = self._complete()
                if completion is None:
                    break
                valid, finished = self._act(turn, completion)
                consecutive_invalid = 0 if valid else consecutive_invalid + 1
                if finished:
                    script.stop_reason = StopReason.FINISHED
                    break
                if consecutive_invalid >= self.config.max_invalid_turns:
                    script.stop_reason = StopReason.INVALID_TURNS
                    break
            else:
                script.stop_reason = StopReason.MAX_TURNS
        except RequestRejected as exc:
            script.stop_reason = StopReason.REJECTED
            script.rejected = str(exc)
        except EndpointError as exc:
            script.stop_reason = StopReason.ENDPOINT_ERROR
            script.endpoint_error = str(exc)
            script.endpoint_fatal = exc.fatal
            script.retries += exc.retries
        self.clock.stop()
        return script

    def _complete(self) -> Completion | None:
        """The next reply; None when the conversation cannot be made to fit."""
        script = self.transcript
        while True:
            try:
                completion = self.client.complete(script.messages, TOOLS,
                                                  self.config.request_params())
            except ContextLengthError:
                if not _elide_oldest(script.messages):
                    script.stop_reason = StopReason.CONTEXT_LENGTH
                    return None
                script.context_trims += 1
                continue
            script.count_request(completion)
            return completion

    def _act(self, turn: int, completion: Completion) -> tuple[bool, bool]:
        """Record the reply and run its calls; (had a valid call, called finish)."""
        script = self.transcript
        message = completion.message
        script.add_reply(self.client, completion, turn, _assistant(message))
        calls = _parse_calls(message)
        commands: list[str] = []
        observations: list[str] = []
        finished = False
        for call in calls:
            if call.problem is not None:
                reply = f"Invalid call of `{call.name}`: {call.problem}."
            elif call.name == FINISH_TOOL:
                finished = True
                reply = "Task marked as finished; it will now be graded."
            elif finished:
                reply = "Not run: `finish` was called before this command."
            else:
                command = str((call.arguments or {})["command"])
                commands.append(command)
                reply = self._bash(command)
            observations.append(reply)
            script.messages.append({"role": "tool", "tool_call_id": call.id,
                                    "name": call.name, "content": reply})
        valid = any(c.problem is None for c in calls)
        if not calls:
            script.messages.append({"role": "user", "content": NO_TOOL_CALL})
            observations.append(NO_TOOL_CALL)
        if not valid:
            script.invalid_turns += 1
        content = message.get("content")
        script.steps.append(EpisodeStep(
            index=turn, source="agent", message=content if isinstance(content, str) else "",
            keystrokes=commands, observation="\n".join(observations), is_valid_tool_call=valid,
            input_tokens=completion.usage("prompt_tokens"),
            output_tokens=completion.usage("completion_tokens"),
            cached_tokens=completion.usage("cached_tokens"), timestamp=datetime.now(UTC)))
        script.per_turn.append(TurnMetrics(
            turn=turn, input_tokens=completion.usage("prompt_tokens"),
            output_tokens=completion.usage("completion_tokens"),
            cached_tokens=completion.usage("cached_tokens"), duration_s=completion.latency_s))
        return valid, finished

    def _bash(self, command: str) -> str:
        left = self.clock.left()
        if left <= 1:
            return "Not run: the episode's time limit is reached."
        timeout = min(self.config.command_timeout_s, left)
        result = run_command(self.sandbox, command, timeout_s=timeout, workdir=self.workdir,
                             env=self.env)
        return truncate_output(result.reply(timeout), self.config.max_output_chars)
