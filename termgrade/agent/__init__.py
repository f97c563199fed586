"""The bash tool-calling scaffold: a model, one ``bash`` tool, a ``finish`` tool, limits.

:mod:`~termgrade.agent.scaffold` is the one definition of the prompt and tools (grading
and training share it), :mod:`~termgrade.agent.client` talks to any OpenAI-compatible
endpoint, :mod:`~termgrade.agent.loop` runs one episode in a task's container.
"""

from termgrade.agent.client import ChatClient, Endpoint, client_for
from termgrade.agent.loop import Episode, StopReason, Transcript
from termgrade.agent.scaffold import SCAFFOLD_NAME, SYSTEM_PROMPT, TOOLS, ScaffoldConfig

__all__ = ["SCAFFOLD_NAME", "SYSTEM_PROMPT", "TOOLS", "ChatClient", "Endpoint", "Episode",
           "ScaffoldConfig", "StopReason", "Transcript", "client_for"]
