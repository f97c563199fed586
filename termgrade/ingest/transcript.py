"""What an agent's logs yield, whichever files they came from; and Terminus-2's reply format.

Terminus-2 (Harbor's reference scaffold) asks the model for one JSON object per turn::

    {"analysis": "...", "plan": "...",
     "commands": [{"keystrokes": "ls\\n", "duration": 0.1}], "task_complete": false}

and answers an unparsable reply with a prompt that starts with
:data:`PARSE_ERROR_PREFIX`, which is how a turn with no valid tool call is recognized.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from termgrade.records import ChatMessage, EpisodeStep, TurnMetrics

PARSE_ERROR_PREFIX = "Previous response had parsing errors"


@dataclass
class LoggedTranscript:
    """Messages, episode steps and per-turn metrics read from one trial's agent logs."""

    messages: list[ChatMessage] = field(default_factory=list)
    messages_source: str | None = None
    episode: list[EpisodeStep] = field(default_factory=list)
    per_turn: list[TurnMetrics] = field(default_factory=list)
    turns: int | None = None

    def extend(self, other: LoggedTranscript) -> None:
        """Append a later step's transcript (multi-step trials), renumbering its steps."""
        offset, turn_offset = len(self.episode), len(self.per_turn)
        self.messages += other.messages
        self.messages_source = self.messages_source or other.messages_source
        self.episode += [s.model_copy(update={"index": s.index + offset}) for s in other.episode]
        self.per_turn += [t.model_copy(update={"turn": t.turn + turn_offset})
                          for t in other.per_turn]
        if other.turns is not None:
            self.turns = (self.turns or 0) + other.turns


def parse_terminus_reply(text: str) -> dict[str, Any] | None:
    """The JSON object in a Terminus-2 reply (text around it is tolerated), or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        body = json.loads(text[start:end + 1])
    except json.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


def reply_keystrokes(reply: dict[str, Any]) -> list[str]:
    commands = reply.get("commands")
    if not isinstance(commands, list):
        return []
    return [c["keystrokes"] for c in commands
            if isinstance(c, dict) and isinstance(c.get("keystrokes"), str)]


def split_analysis_plan(message: str) -> tuple[str, str] | None:
    """Terminus-2's ATIF message ``Analysis: A\\nPlan: P`` as (A, P); None if not that form."""
    if message.startswith("Analysis: "):
        body = message[len("Analysis: "):]
        analysis, sep, plan = body.partition("\nPlan: ")
        return (analysis, plan) if sep else (body, "")
    if message.startswith("Plan: "):
        return "", message[len("Plan: "):]
    return None


def rebuild_terminus_reply(analysis: str, plan: str, commands: list[dict[str, Any]],
                           task_complete: bool) -> str:
    """A Terminus-2 JSON reply with the same content (not byte-identical to the original)."""
    return json.dumps({"analysis": analysis, "plan": plan, "commands": commands,
                       "task_complete": task_complete}, indent=2, ensure_ascii=False)


def text_of(content: Any) -> str:
    """A message or observation as text: strings as-is, content parts' text joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content
                       if isinstance(p, dict) and p.get("type", "text") == "text")
    return str(content)
