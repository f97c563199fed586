"""A trial's agent logs -> one :class:`~termgrade.ingest.transcript.LoggedTranscript`.

Sources, per agent directory (``agent/``, or ``steps/<step>/agent/`` in order for a
multi-step trial):

* ``trajectory.json`` (ATIF) gives the episode steps and per-turn metrics;
* ``episode-N/`` files (Harbor < 0.9) give byte-exact messages, and the steps when
  there is no trajectory;
* ``agent_result.metadata.all_messages`` in result.json (Terminus-2 run with
  ``store_all_messages``) is the agent's own chat log and wins for the messages.

Oracle and nop runs leave none of these: their transcript is None.
"""

from __future__ import annotations

from typing import Any

from termgrade.ingest.atif import read_atif
from termgrade.ingest.episodes import read_episodes
from termgrade.ingest.harbor_layout import AgentPaths, TrialPaths
from termgrade.ingest.transcript import LoggedTranscript, text_of
from termgrade.ingest.trial_result import HarborAgentContext, HarborTrialResult
from termgrade.records import ChatMessage


def _agent_dirs(paths: TrialPaths, result: HarborTrialResult) -> list[AgentPaths]:
    if result.step_results:
        return [paths.step_agent(s.step_name) for s in result.step_results]
    return [paths.agent]


def _from_files(agent: AgentPaths) -> LoggedTranscript | None:
    trajectory_files, episode_dirs = agent.trajectory_files(), agent.episode_dirs()
    episodes = read_episodes(episode_dirs) if episode_dirs else None
    if not trajectory_files:
        return episodes if episodes and episodes.turns else None
    transcript = read_atif(trajectory_files)
    if episodes is not None and episodes.messages:
        transcript.messages = episodes.messages
        transcript.messages_source = episodes.messages_source
    return transcript


def _chat_log(contexts: list[HarborAgentContext | None]) -> list[ChatMessage]:
    """The agents' own message logs (``all_messages``), steps in order; empty if absent."""
    messages: list[ChatMessage] = []
    for context in contexts:
        log: Any = ((context.metadata if context else None) or {}).get("all_messages")
        if not isinstance(log, list) or not all(isinstance(m, dict) for m in log):
            return []
        messages += [ChatMessage(role=str(m.get("role", "")), content=text_of(m.get("content")))
                     for m in log]
    return messages


def read_agent_logs(paths: TrialPaths, result: HarborTrialResult,
                    notes: list[str]) -> LoggedTranscript | None:
    """The trial's transcript, or None when its agent left no logs (oracle, nop).

    An unreadable trajectory adds a line to ``notes`` and yields None: the trial itself
    is still a valid record.
    """
    combined: LoggedTranscript | None = None
    for agent in _agent_dirs(paths, result):
        try:
            part = _from_files(agent)
        except (OSError, ValueError) as exc:
            notes.append(f"{agent.root}: trajectory unreadable, messages and episode "
                         f"left empty ({str(exc).splitlines()[0]})")
            return None
        if part is None:
            continue
        if combined is None:
            combined = part
        else:
            combined.extend(part)
    contexts = ([s.agent_result for s in result.step_results] if result.step_results
                else [result.agent_result])
    chat = _chat_log(contexts)
    if chat:
        combined = combined or LoggedTranscript()
        combined.messages, combined.messages_source = chat, "chat"
    return combined
