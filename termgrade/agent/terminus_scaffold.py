"""The Terminus-2-style scaffold behind the scaffold door (``--scaffold terminus-2``).

The model works a terminal the way Harbor's Terminus-2 (the scaffold the paper's release
graded every model under) has it: one JSON object per turn with ``analysis``, ``plan``,
``commands`` (keystrokes and durations) and ``task_complete`` (confirmed by a second
one), keystrokes typed into a tmux session in the agent's container, the terminal's
frames sent back. The protocol is Harbor's (Apache-2.0); the code and the prompt's words
are TermGrade's: :mod:`~termgrade.agent.terminus_prompt` (what the model is told),
:mod:`~termgrade.agent.terminus_turns` (how a reply is read),
:mod:`~termgrade.agent.tmux` (the session), :mod:`~termgrade.agent.terminus_episode` (the
loop). Its trials carry the episode form an ingested Harbor Terminus-2 trial carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from termgrade.agent import terminus_prompt as prompt
from termgrade.agent.episode import AgentRun, ModelAgent, agent_time_limit_s, endpoint_failure
from termgrade.agent.scaffolds import ScaffoldBase, config_of, register_scaffold
from termgrade.agent.terminus_episode import MAX_WAIT_S
from termgrade.agent.terminus_turns import DEFAULT_DURATION_S, REQUIRED_FIELDS
from termgrade.agent.tmux import HISTORY_LINES, PANE_HEIGHT, PANE_WIDTH

if TYPE_CHECKING:
    from termgrade.sandbox.base import Sandbox
    from termgrade.task import Task

TERMINUS_NAME = "terminus-2"


@register_scaffold
class TerminusScaffold(ScaffoldBase):
    name = TERMINUS_NAME
    version = "1"
    tools = ()
    """None: the turn format is text (JSON in the reply), not tool calls."""

    def identity(self, agent: ModelAgent) -> dict[str, Any]:
        return {
            "scaffold": TERMINUS_NAME,
            "prompt": prompt.PROMPT,
            "messages": {"confirm": prompt.CONFIRM, "parse_error": prompt.PARSE_ERROR,
                         "warnings": prompt.WARNINGS,
                         "frames": [prompt.NEW_OUTPUT, prompt.SCREEN]},
            "format": {"required": list(REQUIRED_FIELDS), "optional": ["task_complete"],
                       "command": ["keystrokes", "duration"],
                       "default_duration_s": DEFAULT_DURATION_S},
            "limits": {"max_wait_s": MAX_WAIT_S, "history_lines": HISTORY_LINES,
                       "pane": [PANE_WIDTH, PANE_HEIGHT]},
            "config": config_of(agent),
        }

    def run(self, agent: ModelAgent, sandbox: Sandbox, task: Task) -> AgentRun:
        from termgrade.agent.client import client_for
        from termgrade.agent.terminus_episode import TerminusEpisode

        episode = TerminusEpisode(
            client_for(agent.endpoint), sandbox, task.instruction,
            task.config.environment.workdir or "/app", agent.config,
            agent_time_limit_s(task, agent.config),
            env=dict(task.config.environment.env) or None)
        transcript = episode.run()
        return AgentRun(result=None, transcript=transcript, error=episode.terminal_error,
                        infrastructure_error=episode.lost or endpoint_failure(transcript))
