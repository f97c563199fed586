"""Reading one Terminus-2 turn: the model's reply as one JSON object.

The protocol (Harbor's Terminus-2, whose format this follows; the code is TermGrade's)::

    {"analysis": "...", "plan": "...",
     "commands": [{"keystrokes": "ls -la\\n", "duration": 0.1}],
     "task_complete": false}

``analysis``, ``plan`` and ``commands`` are required; ``task_complete`` is optional (false).
A command needs ``keystrokes`` (a string, sent verbatim); ``duration`` (seconds to wait
after sending them) defaults to :data:`DEFAULT_DURATION_S`. The reply may carry text
around the object (a warning, not an error). What the scaffold does with a reply:

* an **error** (no object, JSON that does not parse, a missing field, ``commands`` not a
  list, a command without string keystrokes): nothing runs; the next user message is the
  error, and the turn is recorded as one with no valid call;
* **warnings** (text around the object, a duration missing or not a number, a field of
  the wrong type, an unclosed object that closing braces repair): the commands run and
  the warnings precede the next terminal frame;
* a reply with ``task_complete`` whose commands are malformed still counts as a request
  to finish (its command errors become warnings): the model is asked to confirm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

REQUIRED_FIELDS = ("analysis", "plan", "commands")
DEFAULT_DURATION_S = 1.0
TRUE_WORDS = frozenset({"true", "yes", "1"})


@dataclass(frozen=True)
class Keystrokes:
    """One command of a turn: keys sent to the terminal, then a wait."""

    keys: str
    duration_s: float


@dataclass(frozen=True)
class Turn:
    """A parsed reply. ``error`` set: nothing of it runs."""

    analysis: str = ""
    plan: str = ""
    commands: tuple[Keystrokes, ...] = ()
    task_complete: bool = False
    error: str | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def valid(self) -> bool:
        return self.error is None

    def step_message(self, raw: str) -> str:
        """The episode step's ``message``: ``Analysis: A\\nPlan: P`` (each part present
        only when not empty) for a parsed turn, the reply verbatim for a failed one, as
        Harbor's trajectories record a Terminus-2 turn."""
        if not self.valid:
            return raw
        parts = [f"Analysis: {self.analysis}" if self.analysis else "",
                 f"Plan: {self.plan}" if self.plan else ""]
        return "\n".join(p for p in parts if p)


def find_object(text: str) -> tuple[str | None, list[str]]:
    """The first balanced ``{...}`` in ``text`` (braces inside JSON strings ignored), and
    warnings for text before or after it. None when no object closes."""
    depth, start, in_string, escaped = 0, -1, False, False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == "{":
            start = i if depth == 0 else start
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                warnings = []
                if text[:start].strip():
                    warnings.append("text before the JSON object was ignored")
                if text[i + 1:].strip():
                    warnings.append("text after the JSON object was ignored")
                return text[start:i + 1], warnings
    return None, []


def _close_braces(text: str) -> str | None:
    """``text`` with the braces it leaves open closed, if it opens an object at all."""
    start = text.find("{")
    if start < 0:
        return None
    missing = text.count("{") - text.count("}")
    return text[start:].rstrip() + "}" * missing if missing > 0 else None


def _load(text: str) -> tuple[Any, list[str], str | None]:
    """(the JSON value, warnings, error)."""
    body, warnings = find_object(text)
    if body is None:
        repaired = _close_braces(text)
        if repaired is not None:
            try:
                value = json.loads(repaired)
            except json.JSONDecodeError as exc:
                return None, [], ("the JSON does not parse: its object is never closed "
                                  f"({exc.msg} once closed)")
            return value, ["the JSON object was not closed; closing braces were added "
                           "(close it yourself next time)"], None
        return None, [], "no JSON object found in the reply"
    try:
        return json.loads(body), warnings, None
    except json.JSONDecodeError as exc:
        shown = body if len(body) <= 160 else body[:160] + "..."
        return None, warnings, f"the JSON does not parse ({exc.msg} at offset {exc.pos}): {shown!r}"


def _complete_flag(value: Any, warnings: list[str]) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in TRUE_WORDS
    warnings.append("'task_complete' should be true or false")
    return False


def _commands(items: list[Any], warnings: list[str]) -> tuple[list[Keystrokes], str | None]:
    parsed: list[Keystrokes] = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            return [], f"command {n} is not an object"
        keys = item.get("keystrokes")
        if "keystrokes" not in item:
            return [], f"command {n} has no 'keystrokes'"
        if not isinstance(keys, str):
            return [], f"command {n}: 'keystrokes' must be a string"
        duration = item.get("duration")
        if isinstance(duration, bool) or not isinstance(duration, int | float):
            warnings.append(f"command {n}: 'duration' "
                            f"{'is missing' if duration is None else 'is not a number'}; "
                            f"waited {DEFAULT_DURATION_S:g} s")
            duration = DEFAULT_DURATION_S
        extra = sorted(set(item) - {"keystrokes", "duration"})
        if extra:
            warnings.append(f"command {n}: unknown fields {', '.join(extra)} ignored")
        if keys and not keys.endswith("\n") and n < len(items):
            warnings.append(f"command {n} does not end with a newline, so the next one is "
                            "typed on the same line")
        parsed.append(Keystrokes(keys, max(0.0, float(duration))))
    return parsed, None


def parse_turn(reply: str) -> Turn:
    """The :class:`Turn` a reply holds; never raises."""
    value, warnings, error = _load(reply)
    if error is not None:
        return Turn(error=error, warnings=tuple(warnings))
    if not isinstance(value, dict):
        return Turn(error="the reply must be a JSON object", warnings=tuple(warnings))
    missing = [name for name in REQUIRED_FIELDS if name not in value]
    if missing:
        return Turn(error=f"missing required fields: {', '.join(missing)}",
                    warnings=tuple(warnings))
    texts = {}
    for name in ("analysis", "plan"):
        text = value[name]
        if not isinstance(text, str):
            warnings.append(f"'{name}' should be a string")
            text = "" if text is None else json.dumps(text)
        texts[name] = text
    complete = _complete_flag(value.get("task_complete"), warnings)
    if not isinstance(value["commands"], list):
        return Turn(texts["analysis"], texts["plan"], error="'commands' must be a list",
                    warnings=tuple(warnings))
    commands, problem = _commands(value["commands"], warnings)
    if problem is not None and not complete:
        return Turn(texts["analysis"], texts["plan"], error=problem, warnings=tuple(warnings))
    if problem is not None:
        warnings.append(problem + " (no command ran; the task is marked complete)")
    return Turn(texts["analysis"], texts["plan"], tuple(commands), complete,
                warnings=tuple(warnings))
