"""One TrialRecord (as a JSON-mode dict) -> one trajectory row: the columns of its ``sft``
row and of its ``episodes`` row together (the writer splits them; ``trial_id`` is in both).
The episode holds no text its sft messages hold: a step's message or terminal frame found
verbatim in them is a span of them (:func:`resolve_steps` puts the text back).

``messages`` is the record's own ``messages`` when present. Otherwise it is derived from
the episode the way Harbor's trace export does: a system / user step becomes a message of
that role, an agent step becomes an ``assistant`` message (its text, then each keystroke
batch as a ``<tool_call>`` block unless the text already holds it), and the terminal frame
the agent saw next becomes a ``user`` message.

No column list is written here: the record fields a row holds as they are
(:data:`~termgrade.builders.rows.COPIED_TRIAL_FIELDS`), a message's fields and a step's
fields all come from the row models (:mod:`termgrade.builders.rows`).
"""

from __future__ import annotations

import json
from typing import Any

from termgrade.builders.rows import COPIED_TRIAL_FIELDS, StepRow
from termgrade.records.trial import ChatMessage

Row = dict[str, Any]
FAILED_OUTCOMES = frozenset({"failed", "error"})


def _tool_call(keystrokes: str) -> str:
    """``<tool_call>`` + the JSON of a send_keys call (as json.dumps of the dict would)."""
    return ('<tool_call>\n{"name": "send_keys", "arguments": {"keystrokes": '
            + json.dumps(keystrokes, ensure_ascii=False) + "}}\n</tool_call>")


def messages_from_episode(steps: list[Row]) -> list[Row]:
    messages: list[Row] = []
    for step in steps:
        source = step["source"]
        if source in ("system", "user"):
            messages.append({"role": source, "content": step["message"]})
        else:
            text = step["message"]
            calls = [_tool_call(k) for k in step["keystrokes"] if k not in text]
            messages.append({"role": "assistant", "content": "\n".join([text, *calls]).strip()})
        if step["observation"]:
            messages.append({"role": "user", "content": step["observation"]})
    return messages


def tool_definitions(scaffold: str) -> str | None:
    """The tools (OpenAI form, JSON) a scaffold offered the model: a chat template needs them
    (``tools=``) to render the ``sft`` messages of a tool-calling scaffold, so the ``sft`` row
    carries them as ``tools`` (what TRL's ``SFTTrainer`` reads beside ``messages``) and the
    ``episodes`` row as Harbor's ``tool_definitions`` (the same text). Null for a
    scaffold whose turns are text (terminus-2: JSON in the reply, the format in the first
    user message) and for one not registered here (oracle, nop, a Harbor agent)."""
    from termgrade.agent.scaffolds import registered

    known = registered().get(scaffold)
    return json.dumps(list(known.tools)) if known is not None and known.tools else None


MESSAGE_FIELDS = tuple(ChatMessage.model_fields)
STEP_FIELDS = tuple(StepRow.model_fields)


def _message(message: Row) -> Row:
    """Every field of a message row, null where the message has none."""
    return {field: message.get(field) for field in MESSAGE_FIELDS}


def chat_messages(trial: Row) -> list[Row]:
    if trial.get("messages") is not None:
        return [_message(m) for m in trial["messages"]]
    return [_message(m) for m in messages_from_episode(trial.get("episode") or [])]


SPAN_WINDOW = 4
"""Messages searched for a step's text, from the last one a text was found in."""


def _step(step: Row) -> Row:
    """A record's episode step as a step row: its fields, spans null (:func:`_spans`)."""
    return {name: step[name] if not name.endswith("_span") else None
            for name in STEP_FIELDS}


def _spans(steps: list[Row], messages: list[Row]) -> None:
    """Replace each step text found verbatim in ``messages`` (searched in order, a few
    messages ahead) by its span."""
    contents = [m["content"] or "" for m in messages]
    at = 0
    for step in steps:
        for name in ("message", "observation"):
            text = step[name]
            if not text:
                continue
            for i in range(at, min(at + SPAN_WINDOW, len(contents))):
                start = contents[i].find(text)
                if start >= 0:
                    step[name] = None
                    step[f"{name}_span"] = {"message_index": i, "start": start,
                                            "end": start + len(text)}
                    at = i
                    break


def resolve_steps(steps: list[Row], messages: list[Row]) -> list[Row]:
    """An ``episodes`` row's ``steps`` with every spanned text put back from its ``sft``
    row's ``messages`` (the rows of one ``trial_id``)."""
    out = []
    for step in steps:
        step = dict(step)
        for name in ("message", "observation"):
            span = step.get(f"{name}_span")
            if span is not None:
                content = messages[span["message_index"]]["content"] or ""
                step[name] = content[span["start"]:span["end"]]
        out.append(step)
    return out


def _result(trial: Row) -> str | None:
    if trial["reward"] is not None:
        return str(float(trial["reward"]))
    exception: str | None = trial["exception_type"]
    return exception


def _messages_source(trial: Row, messages: list[Row]) -> str:
    if not messages:
        return "none"
    if trial.get("messages") is not None:
        return str(trial.get("messages_source") or "recorded")
    return "episode-rebuilt"


JOIN_KEYS = ("split", "pass_rate", "band")
"""Columns a row gets from the build's split flags and labels (null without them)."""


def trajectory_row(trial: Row, messages: list[Row], instruction: str,
                   join: Row | None = None) -> Row:
    """The sft and episodes columns of one trial. ``join``: the task's ``split`` and the
    task x model x scaffold ``pass_rate`` and ``band`` (any left out are null)."""
    steps = [_step(s) for s in trial.get("episode") or []]
    _spans(steps, messages)
    n_agent = sum(1 for s in steps if s["source"] == "agent")
    model: str = trial["model"]
    tools = tool_definitions(trial["scaffold"])
    return {
        **{key: (join or {}).get(key) for key in JOIN_KEYS},
        "messages_source": _messages_source(trial, messages),
        **{key: trial[key] for key in COPIED_TRIAL_FIELDS},
        "failed_tests": [t["name"] for t in trial["tests"] if t["outcome"] in FAILED_OUTCOMES],
        "steps": steps,
        "messages": messages,
        "tools": tools,
        "model_provider": trial.get("model_provider") or (
            model.split("/", 1)[0] if "/" in model else None),
        "date": trial["started_at"],
        "episode": f"episode-{max(n_agent - 1, 0)}",
        "run_id": trial.get("job_id") or trial["source"],
        "result": _result(trial),
        "tool_definitions": tools,
        "instruction": instruction,
        "verifier_output": trial.get("verifier_output"),
        "trace_source": "main",
    }
