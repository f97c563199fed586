"""The bash tool-calling scaffold behind the scaffold door (``--scaffold bash-tool``).

Its prompt and tools are :mod:`termgrade.agent.scaffold`, its loop
:mod:`termgrade.agent.loop`; this module only registers them. Its identity payload is the
one ``grade/reuse.py`` hashed before the door existed, so earlier trials keep their
``scaffold_digest`` and ``grade --reuse`` still takes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from termgrade.agent.episode import AgentRun, ModelAgent, agent_time_limit_s, endpoint_failure
from termgrade.agent.scaffold import SCAFFOLD_NAME, SYSTEM_PROMPT, TOOLS, VERL_AGENT_LOOP
from termgrade.agent.scaffolds import ScaffoldBase, TrainingLoop, config_of, register_scaffold

if TYPE_CHECKING:
    from termgrade.sandbox.base import Sandbox
    from termgrade.task import Task


@register_scaffold
class BashToolScaffold(ScaffoldBase):
    name = SCAFFOLD_NAME
    version = "1"
    tools = TOOLS
    training = TrainingLoop(VERL_AGENT_LOOP, "termgrade.training.agent_loop:BashAgentLoop")
    """verl's agent loop trains a model in this scaffold (``termgrade train``)."""

    def identity(self, agent: ModelAgent) -> dict[str, Any]:
        return {"scaffold": SCAFFOLD_NAME, "system_prompt": SYSTEM_PROMPT,
                "tools": list(TOOLS), "config": config_of(agent)}

    def run(self, agent: ModelAgent, sandbox: Sandbox, task: Task) -> AgentRun:
        from termgrade.agent.client import client_for
        from termgrade.agent.loop import Episode

        episode = Episode(client_for(agent.endpoint), sandbox, task.instruction,
                          task.config.environment.workdir or "/app", agent.config,
                          agent_time_limit_s(task, agent.config),
                          env=dict(task.config.environment.env) or None)
        transcript = episode.run()
        return AgentRun(result=None, transcript=transcript,
                        infrastructure_error=endpoint_failure(transcript))
