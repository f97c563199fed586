"""Scaffolds: how a model meets a task's container, registered by name.

The bash tool-calling scaffold (a model, one ``bash`` tool, a ``finish`` tool, limits):
:mod:`~termgrade.agent.scaffold` is the one definition of its prompt and tools (grading
and training share it), :mod:`~termgrade.agent.loop` runs one episode. The Terminus-2-style
scaffold (JSON turns of keystrokes typed into tmux): :mod:`~termgrade.agent.terminus_scaffold`.
:mod:`~termgrade.agent.scaffolds` is the registry, :mod:`~termgrade.agent.episode` the
types every scaffold's episode shares (limits, transcript, stop reasons, clock),
:mod:`~termgrade.agent.client` talks to any OpenAI-compatible endpoint.
"""

from termgrade.agent.client import ChatClient, Endpoint, client_for
from termgrade.agent.episode import ScaffoldConfig, StopReason, Transcript
from termgrade.agent.loop import Episode
from termgrade.agent.scaffold import SCAFFOLD_NAME, SYSTEM_PROMPT, TOOLS

__all__ = ["SCAFFOLD_NAME", "SYSTEM_PROMPT", "TOOLS", "ChatClient", "Endpoint", "Episode",
           "ScaffoldConfig", "StopReason", "Transcript", "client_for"]
