"""Reading the ``agent/episode-N/`` files Terminus-2 wrote in Harbor < 0.9.

Each episode (one model call) has ``prompt.txt`` (exactly what was sent as the user
turn), ``response.txt`` (exactly what the model answered) and ``debug.json`` (LiteLLM's
log of the call, whose ``original_response`` carries the token usage). The messages they
give are exact (``messages_source = "episodes"``). The episode steps are only needed when
the trial has no ATIF trajectory: the first prompt, then one agent step per episode whose
observation is the next episode's prompt. An episode without ``response.txt`` (the call
failed) ends the transcript.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from termgrade.ingest.harbor_layout import read_json
from termgrade.ingest.transcript import (
    LoggedTranscript,
    parse_terminus_reply,
    reply_keystrokes,
)
from termgrade.records import ChatMessage, EpisodeStep, TurnMetrics

MAX_DEBUG_BYTES = 64 << 20


def _read(path: Path) -> str | None:
    if not path.is_file():
        return None
    return path.read_text(encoding="utf-8", errors="replace")


def _usage(debug_path: Path) -> dict[str, Any]:
    """Token usage of one call from debug.json; empty when absent or unreadable."""
    if not debug_path.is_file() or debug_path.stat().st_size > MAX_DEBUG_BYTES:
        return {}
    try:
        debug = read_json(debug_path)
        raw = debug.get("original_response") if isinstance(debug, dict) else None
        response = json.loads(raw) if isinstance(raw, str) else raw
        usage = response.get("usage") if isinstance(response, dict) else None
    except (OSError, ValueError):
        return {}
    return usage if isinstance(usage, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


def _turn_metrics(turn: int, usage: dict[str, Any]) -> TurnMetrics:
    details = usage.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else None
    return TurnMetrics(turn=turn, input_tokens=_int(usage.get("prompt_tokens")),
                       output_tokens=_int(usage.get("completion_tokens")),
                       cached_tokens=cached or None)


def read_episodes(episode_dirs: list[Path]) -> LoggedTranscript:
    """Messages, episode steps and per-turn metrics from episode-N directories, in order."""
    exchanges: list[tuple[str, str, Path]] = []
    for directory in episode_dirs:
        prompt, response = _read(directory / "prompt.txt"), _read(directory / "response.txt")
        if prompt is None or response is None:
            break
        exchanges.append((prompt, response, directory))
    transcript = LoggedTranscript(messages_source="episodes" if exchanges else None,
                            turns=len(exchanges))
    if not exchanges:
        return transcript
    transcript.episode.append(EpisodeStep(index=0, source="user", message=exchanges[0][0]))
    for turn, (prompt, response, directory) in enumerate(exchanges):
        transcript.messages += [ChatMessage(role="user", content=prompt),
                                ChatMessage(role="assistant", content=response)]
        metrics = _turn_metrics(turn, _usage(directory / "debug.json"))
        transcript.per_turn.append(metrics)
        reply = parse_terminus_reply(response)
        following = exchanges[turn + 1][0] if turn + 1 < len(exchanges) else ""
        transcript.episode.append(EpisodeStep(
            index=turn + 1, source="agent", message=response,
            keystrokes=reply_keystrokes(reply) if reply else [], observation=following,
            is_valid_tool_call=reply is not None, input_tokens=metrics.input_tokens,
            output_tokens=metrics.output_tokens, cached_tokens=metrics.cached_tokens))
    return transcript
