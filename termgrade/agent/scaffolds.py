"""The scaffold door: one interface, a registry by name.

A scaffold is how a model meets a task's container: the prompt, the tools or turn format,
the limits, and the loop that drives one episode. Grading (``termgrade grade --scaffold
NAME``) looks a scaffold up here by name; a trial records the scaffold's ``name``, its
``version`` and its configuration's digest (:meth:`Scaffold.digest`), and ``grade --reuse``
takes an earlier trial only when all three agree with the run's.

Adding a scaffold (``docs/architecture.md`` has the recipe): a class that has the members
of :class:`Scaffold` (derive :class:`ScaffoldBase`), then one of: decorated
``@register_scaffold`` in a module of ``agent/`` named in :data:`BUILT_IN`; an entry point
of the group :data:`ENTRY_POINTS` in your package's metadata; or no registration at all,
named as ``module:Class`` (``grade --scaffold my_pkg.mod:MyScaffold``, as Harbor loads
agents), which registers it under its ``name`` in the process that names it. The registry
is a :class:`~termgrade.core.registry.Registry`, the idiom of every door; the types every
episode shares are :mod:`termgrade.agent.episode`.

The door says which scaffolds can be trained: a scaffold whose ``training`` names a verl
agent loop (:class:`TrainingLoop`) is trainable, and ``termgrade train`` asks
:func:`trainable_scaffolds` / :func:`training_scaffold` instead of naming one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from termgrade.core.errors import OptionError, RegistryError
from termgrade.core.registry import Registry

if TYPE_CHECKING:
    from termgrade.agent.episode import AgentRun, ModelAgent
    from termgrade.sandbox.base import Sandbox
    from termgrade.task import Task


@dataclass(frozen=True)
class TrainingLoop:
    """How ``termgrade train`` trains a model in a scaffold: a verl agent loop."""

    name: str
    """The loop's name in verl's agent-loop registry (the prompt rows' ``agent_name``)."""
    target: str
    """``module:Class`` of the loop (a ``verl.experimental.agent_loop.AgentLoopBase``)."""

    @property
    def hydra_target(self) -> str:
        """The loop as a Hydra ``_target_`` (dotted)."""
        return self.target.replace(":", ".")


class Scaffold(Protocol):
    """What the grader needs of a scaffold."""

    name: str
    """The ``scaffold`` of every trial it produces (labels key on it)."""
    version: str
    """Bumped when the scaffold's behaviour changes in a way its digest does not see."""
    tools: tuple[dict[str, Any], ...]
    """The tool definitions (OpenAI form) offered to the model; empty for a scaffold whose
    turns are text (the endpoint probe and the trajectories' ``tool_definitions`` read it)."""
    training: TrainingLoop | None
    """The verl agent loop that trains a model in this scaffold; None: not trainable."""

    @property
    def trainable(self) -> bool:
        """Whether ``termgrade train`` can train a model in this scaffold."""
        ...

    def identity(self, agent: ModelAgent) -> dict[str, Any]:
        """Everything that shapes a trial (prompt, tools or turn format, limits,
        sampling): its sha256 is the trial's ``scaffold_digest``."""
        ...

    def run(self, agent: ModelAgent, sandbox: Sandbox, task: Task) -> AgentRun:
        """One episode in the agent's container; scoring happens afterwards."""
        ...

    def digest(self, agent: ModelAgent) -> str:
        ...


ENTRY_POINTS = "termgrade.scaffolds"
"""The entry-point group an installed package registers its scaffolds under
(``name = "module:Class"``)."""

BUILT_IN = ("termgrade.agent.bash_scaffold", "termgrade.agent.terminus_scaffold")
"""Modules whose import registers the built-in scaffolds."""

DEFAULT_SCAFFOLD = "bash-tool"
"""The scaffold ``grade`` uses and ``train`` trains in unless told otherwise."""


def _adopt(name: str, obj: Any) -> tuple[str, Scaffold]:
    """A scaffold class (or instance) loaded by ``module:Class`` or an entry point."""
    instance: Any = obj() if isinstance(obj, type) else obj
    missing = [m for m in ("name", "version", "identity", "run", "digest")
               if not hasattr(instance, m)]
    if missing:
        raise RegistryError("scaffold", name, f"{name}: {obj!r} is not a scaffold (no "
                            f"{', '.join(missing)})",
                            fix="derive termgrade.agent.scaffolds.ScaffoldBase and set name, "
                                "version, identity and run")
    return str(instance.name), instance


SCAFFOLDS: Registry[Scaffold] = Registry(
    "scaffold", recipe="Adding a scaffold", built_in=BUILT_IN, group=ENTRY_POINTS,
    adopt=_adopt, same=lambda a, b: type(a) is type(b))
"""The scaffold door's registry."""

_REGISTRY = SCAFFOLDS.entries
S = TypeVar("S")


def unknown_scaffold(name: str) -> OptionError:
    """``--scaffold NAME`` names no registered scaffold: the error naming the known ones."""
    SCAFFOLDS.names()
    return SCAFFOLDS.unknown(name)


def register_scaffold(cls: Callable[[], S]) -> Callable[[], S]:
    """Class decorator: one instance of ``cls`` serves every trial under its ``name``."""
    SCAFFOLDS.adopt(getattr(cls, "__name__", "scaffold"), cls)
    return cls


def registered() -> dict[str, Scaffold]:
    """Name -> scaffold: the built-in ones, entry points' and those registered since."""
    return SCAFFOLDS.items()


def scaffold_for(name: str) -> Scaffold:
    """The scaffold registered as ``name`` (or loaded from ``module:Class``); a
    :class:`~termgrade.core.errors.RegistryError` (an ``OptionError``) naming the known
    ones otherwise."""
    return SCAFFOLDS.get(name)


def trainable_scaffolds() -> dict[str, Scaffold]:
    """Name -> scaffold, of those ``termgrade train`` can train a model in."""
    return {name: s for name, s in registered().items() if s.trainable}


def training_scaffold(selected_in: str | None = None) -> Scaffold | None:
    """The scaffold a run trains in for tasks selected in ``selected_in``: that one when it
    is trainable, the default one when the tasks record none; None when the tasks were
    selected in a scaffold that cannot be trained (their pass rates then do not carry)."""
    trainable = trainable_scaffolds()
    if selected_in is None:
        return trainable[DEFAULT_SCAFFOLD]
    return trainable.get(selected_in)


def config_of(agent: ModelAgent) -> dict[str, Any]:
    """The agent's limits and sampling as trials record them (``scaffold_config``)."""
    return {**asdict(agent.config),
            "extra_body": {str(k): v for k, v in agent.endpoint.extra_body}}


def digest_of(payload: dict[str, Any]) -> str:
    """sha256 of a scaffold's identity payload, in canonical JSON."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ScaffoldBase:
    """Shared members: the digest of :meth:`identity`; no tools and no training loop
    unless a scaffold says."""

    name: str
    version: str
    tools: tuple[dict[str, Any], ...] = ()
    training: TrainingLoop | None = None

    @property
    def trainable(self) -> bool:
        return self.training is not None

    def identity(self, agent: ModelAgent) -> dict[str, Any]:
        raise NotImplementedError

    def digest(self, agent: ModelAgent) -> str:
        return digest_of(self.identity(agent))
