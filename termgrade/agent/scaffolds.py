"""The scaffold door: one interface, a registry by name.

A scaffold is how a model meets a task's container: the prompt, the tools or turn format,
the limits, and the loop that drives one episode. Grading (``termgrade grade --scaffold
NAME``) looks a scaffold up here by name; a trial records the scaffold's ``name``, its
``version`` and its configuration's digest (:meth:`Scaffold.digest`), and ``grade --reuse``
takes an earlier trial only when all three agree with the run's.

Adding a scaffold (``docs/architecture.md`` has the recipe): a module in ``agent/`` with
a class that has the members of :class:`Scaffold`, decorated ``@register_scaffold``, and
its module named in :data:`BUILT_IN`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from termgrade.core.errors import OptionError

if TYPE_CHECKING:
    from termgrade.agent.kinds import AgentRun, ModelAgent
    from termgrade.sandbox.base import Sandbox
    from termgrade.task import Task


class Scaffold(Protocol):
    """What the grader needs of a scaffold."""

    name: str
    """The ``scaffold`` of every trial it produces (labels key on it)."""
    version: str
    """Bumped when the scaffold's behaviour changes in a way its digest does not see."""
    tools: tuple[dict[str, Any], ...]
    """The tool definitions (OpenAI form) offered to the model; empty for a scaffold whose
    turns are text (the endpoint probe and the trajectories' ``tool_definitions`` read it)."""

    def identity(self, agent: ModelAgent) -> dict[str, Any]:
        """Everything that shapes a trial (prompt, tools or turn format, limits,
        sampling): its sha256 is the trial's ``scaffold_digest``."""
        ...

    def run(self, agent: ModelAgent, sandbox: Sandbox, task: Task) -> AgentRun:
        """One episode in the agent's container; scoring happens afterwards."""
        ...

    def digest(self, agent: ModelAgent) -> str:
        ...


def unknown_scaffold(name: str) -> OptionError:
    """``--scaffold NAME`` names no registered scaffold: the error naming the known ones."""
    known = ", ".join(sorted(registered()))
    return OptionError(f"--scaffold {name}: no such scaffold (known: {known})",
                       fix=f"choose one of {known}, or register yours "
                           "(docs/architecture.md, 'Adding a scaffold')")


BUILT_IN = ("termgrade.agent.bash_scaffold", "termgrade.agent.terminus_scaffold")
"""Modules whose import registers the built-in scaffolds."""

_REGISTRY: dict[str, Scaffold] = {}
S = TypeVar("S")


def register_scaffold(cls: Callable[[], S]) -> Callable[[], S]:
    """Class decorator: one instance of ``cls`` serves every trial under its ``name``."""
    instance: Any = cls()
    if instance.name in _REGISTRY and type(_REGISTRY[instance.name]) is not cls:
        raise OptionError(f"scaffold {instance.name!r} registered twice",
                          fix="give the new scaffold its own name")
    _REGISTRY[instance.name] = instance
    return cls


def _load_built_ins() -> None:
    for module in BUILT_IN:
        import_module(module)


def registered() -> dict[str, Scaffold]:
    """Name -> scaffold, the built-in ones loaded."""
    _load_built_ins()
    return dict(_REGISTRY)


def scaffold_for(name: str) -> Scaffold:
    """The scaffold registered as ``name``; an :class:`OptionError` naming the known ones
    otherwise."""
    scaffolds = registered()
    if name not in scaffolds:
        raise unknown_scaffold(name)
    return scaffolds[name]


def config_of(agent: ModelAgent) -> dict[str, Any]:
    """The agent's limits and sampling as trials record them (``scaffold_config``)."""
    return {**asdict(agent.config),
            "extra_body": {str(k): v for k, v in agent.endpoint.extra_body}}


def digest_of(payload: dict[str, Any]) -> str:
    """sha256 of a scaffold's identity payload, in canonical JSON."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ScaffoldBase:
    """Shared members: the digest of :meth:`identity`; no tools unless a scaffold says."""

    name: str
    version: str
    tools: tuple[dict[str, Any], ...] = ()

    def identity(self, agent: ModelAgent) -> dict[str, Any]:
        raise NotImplementedError

    def digest(self, agent: ModelAgent) -> str:
        return digest_of(self.identity(agent))
