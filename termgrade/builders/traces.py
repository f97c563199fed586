"""Each trial as a Hub-native agent trace (and, on request, as a Harbor ATIF trajectory).

**Session Trace Simple Format (STS-Format).** Followed: the Hub's documentation page
"Session Traces Format" (``huggingface/hub-docs``, ``docs/hub/session-traces-format.md``,
read December 2026). A trace is one JSONL file per session:

* line 1, the session header: ``{"type": "session", "harness": ..., "id": ...}`` with an
  optional ``name`` and any extra metadata (ignored by the viewer). Ours: ``harness``
  ``termgrade``, ``id`` the trial id, ``name`` task / model / attempt, the trial's
  outcome and configuration as metadata, and the ``tools`` its scaffold offered
  (:func:`session_header`);
* every further line one message in an envelope, ``{"type": "message", "message": {...}}``:
  ``role`` (``user`` / ``assistant`` / ``system`` / ``tool``) and ``content`` (text, may be
  empty) required; optional ``reasoningContent``, ``toolCalls``
  (``[{"id", "function": {"name", "arguments"}}]``, ``arguments`` a JSON *string*),
  ``toolCallId`` (on a ``tool`` message, the call it answers), ``timestamp`` (epoch
  milliseconds) and ``model`` (:func:`sts_message`).

The messages are the trial's ``sft`` messages (the record's own, or rebuilt from its
episode: :func:`~termgrade.builders.trajectory_rows.chat_messages`), so a trace shows
exactly what the ``sft`` row trains on. Messages carry no per-message time (the record
keeps none), so ``timestamp`` is left out; ``model`` is on assistant messages.

The Hub detects STS files and lists the dataset under its ``format:agent-traces`` filter
(a format the Hub assigns on detection, like ``format:parquet``; a card cannot set it); the
card adds the ``agent-traces`` tag and a ``traces`` config over the files so Data Studio
opens them in its trace viewer. Layout: ``traces/train/<task_id>/<trial_id>.jsonl`` (one
folder per task keeps folders under the Hub's per-folder file count).

**ATIF** (Harbor's Agent Trajectory Interchange Format, ``ATIF-v1.8``): followed Harbor
0.26's pydantic models (``harbor.models.trajectories``), which validate what
:func:`atif_trajectory` writes (``tests/builders/test_traces.py``). Written with
``atif=True`` to ``atif/<task_id>/<trial_id>.json``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from termgrade.builders.trajectory_rows import tool_definitions
from termgrade.core.version import __version__

Row = dict[str, Any]

HARNESS = "termgrade"
"""The STS ``harness`` id of every trace this package writes."""
TRACES_DIR = "traces"
TRACE_SPLIT = "train"
ATIF_DIR = "atif"
ATIF_VERSION = "ATIF-v1.8"
TRACES_TAG = "agent-traces"
STS_ROLES = frozenset({"user", "assistant", "system", "tool"})
SESSION_METADATA = ("task_id", "model", "scaffold", "attempt", "reward", "passed", "counted",
                    "exception_type", "started_at", "finished_at", "duration_s",
                    "input_tokens", "output_tokens", "task_digest", "scaffold_digest")
"""Trial fields the session header carries as metadata (the viewer ignores them; a
reader filters on them)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(name: str) -> str:
    """``name`` as one path component: characters other than ``[A-Za-z0-9._-]`` become
    ``_``, with a short hash of the original when any did (two ids stay two files)."""
    clean = _UNSAFE.sub("_", name).lstrip(".") or "_"
    if clean == name:
        return name
    return f"{clean}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def trace_rel(task_id: str, trial_id: str) -> str:
    """A trial's trace file, relative to the repo root."""
    return f"{TRACES_DIR}/{TRACE_SPLIT}/{safe_name(task_id)}/{safe_name(trial_id)}.jsonl"


def trace_glob() -> str:
    """The card's ``data_files`` pattern of the ``traces`` config."""
    return f"{TRACES_DIR}/{TRACE_SPLIT}/*/*.jsonl"


def atif_rel(task_id: str, trial_id: str) -> str:
    return f"{ATIF_DIR}/{safe_name(task_id)}/{safe_name(trial_id)}.json"


def session_header(trial: Row) -> Row:
    """The STS header line of one trial (a TrialRecord as a JSON-mode dict). ``tools``:
    the tool schemas the trial's scaffold offered (the ``sft`` row's ``tools``, as a list),
    null where it offers none."""
    tools = tool_definitions(trial["scaffold"])
    return {"type": "session", "harness": HARNESS, "id": trial["trial_id"],
            "name": f"{trial['task_id']} / {trial['model']} / attempt {trial['attempt']}",
            **{key: trial.get(key) for key in SESSION_METADATA},
            "tools": json.loads(tools) if tools is not None else None}


def sts_message(message: Row, model: str) -> Row:
    """One chat message (OpenAI form, as the ``sft`` rows hold it) as an STS message."""
    role = message["role"] if message["role"] in STS_ROLES else "user"
    out: Row = {"role": role, "content": message.get("content") or ""}
    if message.get("reasoning_content"):
        out["reasoningContent"] = message["reasoning_content"]
    if message.get("tool_calls"):
        out["toolCalls"] = [{"id": call["id"],
                             "function": {"name": call["function"]["name"],
                                          "arguments": _arguments_text(
                                              call["function"]["arguments"])}}
                            for call in message["tool_calls"]]
    if message.get("tool_call_id"):
        out["toolCallId"] = message["tool_call_id"]
    if role == "assistant":
        out["model"] = model
    return out


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def trace_lines(trial: Row, messages: list[Row]) -> list[Row]:
    """The STS lines of one trial: its header, then one envelope per message."""
    return [session_header(trial),
            *({"type": "message", "message": sts_message(m, trial["model"])}
              for m in messages)]


def _iso(value: Any) -> str | None:
    return None if value is None else str(value)


def _atif_arguments(text: Any) -> dict[str, Any]:
    """ATIF wants a mapping; a malformed call keeps the model's text under ``raw``."""
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return {"raw": text}
    return value if isinstance(value, dict) else {"raw": text}


def _metrics(step: Row) -> Row | None:
    metrics = {"prompt_tokens": step.get("input_tokens"),
               "completion_tokens": step.get("output_tokens"),
               "cached_tokens": step.get("cached_tokens")}
    return metrics if any(v is not None for v in metrics.values()) else None


def _steps_from_episode(episode: list[Row], model: str) -> list[Row]:
    """Episode steps as ATIF steps: each keystroke batch a Terminus-2 style
    ``bash_command`` call, the terminal frame that followed the observation."""
    steps: list[Row] = []
    for step in episode:
        out: Row = {"step_id": len(steps) + 1, "source": step["source"],
                    "message": step.get("message") or ""}
        if step.get("timestamp") is not None:
            out["timestamp"] = _iso(step["timestamp"])
        if step["source"] == "agent":
            out["model_name"] = model
            calls = [{"tool_call_id": f"call_{out['step_id']}_{i}",
                      "function_name": "bash_command", "arguments": {"keystrokes": k}}
                     for i, k in enumerate(step.get("keystrokes") or [])]
            if calls:
                out["tool_calls"] = calls
            metrics = _metrics(step)
            if metrics is not None:
                out["metrics"] = metrics
        if step.get("observation"):
            out["observation"] = {"results": [{"content": step["observation"]}]}
        steps.append(out)
    return steps


def _steps_from_messages(messages: list[Row], model: str) -> list[Row]:
    """Chat messages as ATIF steps: an assistant turn is an agent step, and the tool
    messages answering its calls are its observation."""
    steps: list[Row] = []
    for message in messages:
        role = message["role"]
        if role == "tool" and steps and steps[-1]["source"] == "agent":
            results = steps[-1].setdefault("observation", {"results": []})["results"]
            known = {c["tool_call_id"] for c in steps[-1].get("tool_calls") or []}
            call_id = message.get("tool_call_id")
            results.append({"source_call_id": call_id if call_id in known else None,
                            "content": message.get("content") or ""})
            continue
        out: Row = {"step_id": len(steps) + 1,
                    "source": "agent" if role in ("assistant", "tool") else role,
                    "message": message.get("content") or ""}
        if out["source"] not in ("system", "user", "agent"):
            out["source"] = "user"
        if out["source"] == "agent":
            out["model_name"] = model
            if message.get("reasoning_content"):
                out["reasoning_content"] = message["reasoning_content"]
            if message.get("tool_calls"):
                out["tool_calls"] = [
                    {"tool_call_id": call["id"], "function_name": call["function"]["name"],
                     "arguments": _atif_arguments(call["function"]["arguments"])}
                    for call in message["tool_calls"]]
        steps.append(out)
    return steps


def _called_tools(messages: list[Row]) -> bool:
    return any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages)


def _add_episode_times(steps: list[Row], episode: list[Row]) -> None:
    """Per-step time and tokens from the episode onto the agent steps built from the chat:
    the scaffold records one episode step per assistant turn, in order."""
    agent_steps = [s for s in steps if s["source"] == "agent"]
    turns = [e for e in episode if e.get("source") == "agent"]
    if len(agent_steps) != len(turns):
        return
    for step, turn in zip(agent_steps, turns, strict=True):
        if turn.get("timestamp") is not None:
            step["timestamp"] = _iso(turn["timestamp"])
        metrics = _metrics(turn)
        if metrics is not None:
            step["metrics"] = metrics


def final_message(messages: list[Row]) -> str | None:
    """What the agent said last: the summary of its ``finish`` call, else the text of its
    last turn that said something."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        for call in reversed(message.get("tool_calls") or []):
            if call["function"]["name"] == "finish":
                summary = _atif_arguments(call["function"]["arguments"]).get("summary")
                if isinstance(summary, str) and summary:
                    return summary
        if message.get("content"):
            return str(message["content"])
    return None


def _with_instruction(steps: list[Row], instruction: str | None) -> list[Row]:
    """``steps`` with the task's instruction as a user step (after any system step) when
    no user step carries it (an episode starts at the agent's first turn)."""
    if not instruction or any(s["source"] == "user" and instruction.strip() in
                              str(s.get("message") or "") for s in steps):
        return steps
    at = next((i for i, s in enumerate(steps) if s["source"] != "system"), len(steps))
    steps = [*steps[:at], {"step_id": 0, "source": "user", "message": instruction},
             *steps[at:]]
    for number, step in enumerate(steps, 1):
        step["step_id"] = number
    return steps


def atif_trajectory(trial: Row, messages: list[Row],
                    instruction: str | None = None) -> Row | None:
    """One trial as an ATIF-v1.8 trajectory (None when it has no step: an infrastructure
    error before the agent ran).

    A scaffold that calls tools (``bash-tool``: ``bash {command}``, ``finish {summary}``)
    is exported from its chat, which is what happened: the system prompt and the
    instruction as the first steps, each call as called (name, arguments, id), each tool
    message as an observation linked to its call (``source_call_id``), with the episode's
    per-step times and tokens. A scaffold that types keystrokes (Terminus-2) is exported
    from its episode: each keystroke batch a ``bash_command`` call, the terminal frame
    that followed the observation. The task's ``instruction`` is a user step when no step
    carries it; ``extra.final_message`` is what the agent said last (:func:`final_message`)."""
    model: str = trial["model"]
    episode = trial.get("episode") or []
    if _called_tools(messages) or not episode:
        steps = _steps_from_messages(messages, model)
        _add_episode_times(steps, episode)
    else:
        steps = _steps_from_episode(episode, model)
    if not steps:
        return None
    steps = _with_instruction(steps, instruction)
    final = {"total_prompt_tokens": trial.get("input_tokens"),
             "total_completion_tokens": trial.get("output_tokens"),
             "total_cached_tokens": trial.get("cached_tokens"),
             "total_steps": len(steps)}
    return {
        "schema_version": ATIF_VERSION,
        "session_id": trial.get("job_id") or trial["trial_id"],
        "trajectory_id": trial["trial_id"],
        "agent": {"name": trial["scaffold"], "version": __version__, "model_name": model,
                  "extra": {"harness": HARNESS}},
        "steps": steps,
        "final_metrics": {k: v for k, v in final.items() if v is not None},
        "extra": {**{key: trial.get(key) for key in SESSION_METADATA},
                  "final_message": final_message(messages)},
    }


def trace_row(rel: str, lines: list[Row]) -> Row:
    """The ``traces`` config row (:class:`~termgrade.builders.rows.TraceRow`) of one STS
    file at ``rel`` holding ``lines``."""
    header = lines[0]
    messages = []
    for line in lines[1:]:
        message = line["message"]
        messages.append({
            "role": message["role"], "content": message["content"],
            "reasoning_content": message.get("reasoningContent"),
            "tool_calls": [{"id": c["id"], "name": c["function"]["name"],
                            "arguments": c["function"]["arguments"]}
                           for c in message.get("toolCalls") or []],
            "tool_call_id": message.get("toolCallId"), "model": message.get("model")})
    return {"trial_id": header["id"], "task_id": header["task_id"], "model": header["model"],
            "harness": header["harness"], "name": header["name"], "path": rel,
            "session_json": json.dumps(header, ensure_ascii=False, sort_keys=True),
            "messages": messages}


class TraceRows(Protocol):
    """Where :class:`TraceWriter` puts each trace's row (a parquet split writer)."""

    def add(self, row: dict[str, Any], *, where: str) -> None: ...


@dataclass
class TraceWriter:
    """Writes each trial's trace (and ATIF file) under a staged repo root, and its row of
    the ``traces`` config to ``rows``: the Hub's trace viewer reads the STS files, and
    ``datasets`` the parquet (it cannot load JSONL files in a repo whose other configs are
    parquet: one builder serves every config)."""

    root: Path
    atif: bool = False
    files: list[str] = field(default_factory=list)
    rows: TraceRows | None = None

    def add(self, trial: Row, messages: list[Row], instruction: str | None = None) -> None:
        rel = trace_rel(trial["task_id"], trial["trial_id"])
        lines = trace_lines(trial, messages)
        self._write(rel, "".join(json.dumps(line, ensure_ascii=False) + "\n"
                                 for line in lines))
        if self.rows is not None:
            self.rows.add(trace_row(rel, lines), where=f"trial {trial['trial_id']}")
        if self.atif:
            trajectory = atif_trajectory(trial, messages, instruction)
            if trajectory is not None:
                self._write(atif_rel(trial["task_id"], trial["trial_id"]),
                            json.dumps(trajectory, ensure_ascii=False, indent=1) + "\n")

    def _write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.files.append(rel)
