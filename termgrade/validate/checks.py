"""The validate-check door: every check of a staged repo has one shape and one registry.

A check is a function ``check(repo: StagedRepo, report: ValidationReport) -> None``: it
reads the staged repo (a :class:`StagedRepo` is the repo's
:class:`~termgrade.builders.layout.RepoPaths`, plus the options ``validate`` was called with
and what the checks before it found) and adds findings to the report. ``validate`` runs
every registered check in registration order: the built-in ones
(:mod:`termgrade.validate.repo` registers the card, traces, rows, kinds, load, secrets,
archives and registry checks), then yours. A repo kind's own checks
(:attr:`~termgrade.builders.kinds.RepoKind.checks`) have the same shape and run only on a
repo holding that kind's rows.

Adding a check (docs/architecture.md, "Adding a validate check"): a function of that shape,
then one of: :func:`register_check` (or ``@validate_check("name")``) from your code before
``validate`` runs; an entry point of the group :data:`ENTRY_POINTS` in your package's
metadata (``name = "my_pkg.checks:check_x"``). The registry is a
:class:`~termgrade.core.registry.Registry`, the idiom of every door: a duplicate or unknown
name is a :class:`~termgrade.core.errors.RegistryError`.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termgrade.builders.layout import RepoPaths
from termgrade.core.errors import RegistryError
from termgrade.core.registry import Registry

if TYPE_CHECKING:
    from termgrade.validate.cache import ValidationCache
    from termgrade.validate.card_check import ConfigFiles
    from termgrade.validate.findings import ValidationReport
    from termgrade.validate.rows_check import SplitInfo

ENTRY_POINTS = "termgrade.validate_checks"
"""The entry-point group an installed package registers its validate checks under."""


@dataclass(frozen=True)
class ValidateOptions:
    """What ``validate_repo`` was asked (see its docstring)."""

    load: bool = True
    secrets: bool = True
    secrets_baseline: Path | None = None
    cache: bool = True
    accept_baseline: bool = True


@dataclass(eq=False)
class Found:
    """What the checks so far found, for the checks after them."""

    memo: ValidationCache | None = None
    """Checks that passed before, by content (``--no-cache``: remembers nothing)."""
    used: set[str] = field(default_factory=set)
    """The cache keys this run used (the rest are dropped when it is saved)."""
    configs: list[ConfigFiles] = field(default_factory=list)
    """The card's parquet configs (the card check)."""
    traces: list[ConfigFiles] = field(default_factory=list)
    """The card's agent-trace configs (the card check)."""
    infos: list[SplitInfo] = field(default_factory=list)
    """Each config's splits, their row schema and rows (the row check)."""
    task_ids: set[str] = field(default_factory=set)
    """The task ids the archives hold (the archive check)."""
    beside: Executor | None = None
    """A thread a slow check may run in beside the checks after it (the secret scan)."""
    pending: list[Callable[[], None]] = field(default_factory=list)
    """What such a check does once the others are done (wait, merge its findings)."""


@dataclass(frozen=True)
class StagedRepo(RepoPaths):
    """The staged repo a check is given: its paths, the options, what was found so far."""

    options: ValidateOptions = field(default_factory=ValidateOptions)
    found: Found = field(default_factory=Found)

    @property
    def paths(self) -> RepoPaths:
        """The plain paths (what a check hands a worker process)."""
        return RepoPaths(self.root)

    def __reduce__(self) -> tuple[Any, ...]:  # a worker gets the paths, not the state
        return (RepoPaths, (self.root,))


RepoCheck = Callable[[StagedRepo, "ValidationReport"], None]
"""The one shape of a validate check."""


def _adopt(name: str, obj: Any) -> tuple[str, RepoCheck]:
    if not callable(obj):
        raise RegistryError("validate check", name, f"{name}: {obj!r} is not a function",
                            fix="point it at a function check(repo, report) -> None")
    check: RepoCheck = obj
    return name, check


CHECKS: Registry[RepoCheck] = Registry(
    "validate check", recipe="Adding a validate check",
    built_in=("termgrade.validate.repo",), group=ENTRY_POINTS, adopt=_adopt)
"""The validate-check door's registry (its order is the order checks run in)."""


def register_check(name: str, check: RepoCheck) -> RepoCheck:
    """Run ``check`` on every staged repo ``validate`` proves, after those before it."""
    return CHECKS.register(name, check)


def validate_check(name: str) -> Callable[[RepoCheck], RepoCheck]:
    """Decorator form of :func:`register_check`."""
    def register(check: RepoCheck) -> RepoCheck:
        return register_check(name, check)
    return register


def unregister_check(name: str) -> None:
    """Remove a check (a test's own, once the test is done)."""
    CHECKS.unregister(name)


def checks() -> dict[str, RepoCheck]:
    """Name -> check, in the order ``validate`` runs them (entry points installed since the
    last call included)."""
    return CHECKS.refresh()
