"""The bash tool-calling scaffold behind the scaffold door (``--scaffold bash-tool``).

Its prompt and tools are :mod:`termgrade.agent.scaffold`, its loop
:mod:`termgrade.agent.loop`; this module only registers them. Its identity payload is the
one ``grade/reuse.py`` hashed before the door existed, so earlier trials keep their
``scaffold_digest`` and ``grade --reuse`` still takes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from termgrade.agent.scaffold import SCAFFOLD_NAME, SYSTEM_PROMPT, TOOLS
from termgrade.agent.scaffolds import ScaffoldBase, config_of, register_scaffold

if TYPE_CHECKING:
    from termgrade.agent.kinds import AgentRun, ModelAgent
    from termgrade.sandbox.base import Sandbox
    from termgrade.task import Task


@register_scaffold
class BashToolScaffold(ScaffoldBase):
    name = SCAFFOLD_NAME
    version = "1"
    tools = TOOLS

    def identity(self, agent: ModelAgent) -> dict[str, Any]:
        return {"scaffold": SCAFFOLD_NAME, "system_prompt": SYSTEM_PROMPT,
                "tools": list(TOOLS), "config": config_of(agent)}

    def run(self, agent: ModelAgent, sandbox: Sandbox, task: Task) -> AgentRun:
        from termgrade.agent.kinds import run_model

        return run_model(agent, sandbox, task)
