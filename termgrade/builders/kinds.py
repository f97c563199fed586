"""The repo-kind door: one record per dataset repo kind, the only list of them.

A :class:`RepoKind` says everything the rest of TermGrade needs to know about a kind of
staged dataset repo: its builder and what the builder returns, its configs and their row
models (with each model's key columns, and whether its rows carry task archives), the
extra checks ``validate`` runs on it, and its default Hub repo id. ``build``
(:func:`build_repo`, ``termgrade build``), ``validate`` (the schema registry, the key and
archive checks), the CLI's defaults and the public API (``termgrade.build_*``) read it
from :func:`repo_kinds`; no other module lists the kinds.

Adding a kind (docs/architecture.md, "Adding a repo kind"): write its builder, row models
and card under ``builders/``, then call :func:`register_repo_kind` once, here (a kind
TermGrade ships) or from your own code (a kind of yours, registered before you build), or
declare it as an entry point of the group :data:`ENTRY_POINTS` (``name =
"my_pkg.kinds:MY_KIND"``, a :class:`RepoKind`), or name it as ``module:name`` where a kind
is asked for (``termgrade build my_pkg.kinds:MY_KIND``). The registry is a
:class:`~termgrade.core.registry.Registry`, the idiom of every door: an unknown or
duplicate name is a :class:`~termgrade.core.errors.RegistryError` (a ``KeyError`` and a
``ValueError``).

Everything here is a dotted ``module:name`` string, resolved on first use, so the public
API can list the builders without importing pydantic or pyarrow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

from termgrade.core.errors import RegistryError
from termgrade.core.registry import Registry
from termgrade.core.registry import resolve as resolve  # ``module:name`` -> the object

ENTRY_POINTS = "termgrade.repo_kinds"
"""The entry-point group an installed package registers its repo kinds under."""


@dataclass(frozen=True)
class RowKind:
    """One config of a repo kind: its parquet rows' model and key."""

    config: str
    model: str
    """``module:Class`` of the row model; its ``row_schema`` names its JSON Schema."""
    key: tuple[str, ...]
    """Columns unique per row (dotted for a nested field); ``validate`` checks them."""
    archives: bool = False
    """Rows carry a task archive: ``validate`` unpacks and checks each."""

    def resolve_model(self) -> type[Any]:
        model: type[Any] = resolve(self.model)
        return model


@dataclass(frozen=True)
class RepoKind:
    name: str
    """The kind's name: ``termgrade build NAME``."""
    about: str
    """One line: what a repo of this kind holds."""
    builder: str
    """``module:function`` staging the repo: ``f(out: Path, **options) -> summary``."""
    summary: str
    """``module:Class`` the builder returns."""
    default_repo_id: str
    rows: tuple[RowKind, ...]
    checks: tuple[str, ...] = field(default=())
    """Validate checks (the validate door's: a registered name or ``module:function``)
    ``validate`` runs on a repo holding this kind's rows, each called as every validate
    check is, ``f(repo: StagedRepo, report: ValidationReport)`` (a ``StagedRepo`` is the
    repo's ``RepoPaths``)."""
    card: InitVar[str | None] = None
    """Accepted and ignored: the builder renders its card, nothing read this name."""

    def __post_init__(self, card: str | None) -> None:
        del card

    @property
    def builder_name(self) -> str:
        return self.builder.partition(":")[2]

    @property
    def summary_name(self) -> str:
        return self.summary.partition(":")[2]

    def build(self, out: Path, **options: Any) -> Any:
        builder: Callable[..., Any] = resolve(self.builder)
        return builder(out, **options)


def _adopt(name: str, obj: Any) -> tuple[str, RepoKind]:
    """A repo kind loaded by ``module:name`` or an entry point: a :class:`RepoKind`."""
    if not isinstance(obj, RepoKind):
        raise RegistryError("repo kind", name, f"{name}: {obj!r} is not a RepoKind",
                            fix="point it at a termgrade.builders.kinds.RepoKind record")
    _check_builder(obj)
    return obj.name, obj


def _check_builder(kind: RepoKind) -> None:
    """A kind's builder is a public name (``termgrade.build_*``): one per kind."""
    if any(k.builder_name == kind.builder_name and k.name != kind.name
           for k in KINDS.entries.values()):
        raise RegistryError("repo kind", kind.name,
                            f"repo kind {kind.name!r}: a builder named {kind.builder_name!r} "
                            "is already registered", fix="give the builder its own name")


KINDS: Registry[RepoKind] = Registry("repo kind", recipe="Adding a repo kind",
                                    group=ENTRY_POINTS, adopt=_adopt,
                                    same=lambda a, b: a == b)
"""The repo-kind door's registry."""


def registry_version() -> int:
    """Changes whenever a kind is registered or removed (a cache key for derived lists)."""
    return KINDS.version


def register_repo_kind(kind: RepoKind) -> RepoKind:
    """Add a kind to the registry (its name and builder must be new)."""
    if kind.name in KINDS.entries:
        raise RegistryError("repo kind", kind.name,
                            f"repo kind {kind.name!r} is already registered",
                            fix="give the new kind its own name")
    _check_builder(kind)
    return KINDS.register(kind.name, kind)


def unregister_repo_kind(name: str) -> None:
    """Remove a kind (a test's own kind, once the test is done)."""
    KINDS.unregister(name)


def repo_kinds() -> tuple[RepoKind, ...]:
    """Every registered kind, in registration order."""
    return tuple(KINDS.items().values())


def repo_kind(name: str) -> RepoKind:
    """The kind registered as ``name`` (or loaded from ``module:name``)."""
    return KINDS.get(name)


def build_repo(kind: str, out: Path, **options: Any) -> Any:
    """Stage a repo of ``kind`` at ``out`` with its builder's ``options``."""
    return repo_kind(kind).build(out, **options)


def row_kinds() -> tuple[RowKind, ...]:
    """Every config's rows of every kind (a model shared by two kinds appears twice)."""
    return tuple(row for kind in repo_kinds() for row in kind.rows)


def api_names() -> dict[str, str]:
    """Each kind's builder and summary, by public name -> defining module."""
    names: dict[str, str] = {}
    for kind in repo_kinds():
        names[kind.builder_name] = kind.builder.partition(":")[0]
        names[kind.summary_name] = kind.summary.partition(":")[0]
    return names


_B = "termgrade.builders"

register_repo_kind(RepoKind(
    name="environments",
    about="Tasks (parquet + tasks/ tree + registry.json), labels, split flags, base image.",
    builder=f"{_B}.environments:build_environments",
    summary=f"{_B}.environments:EnvironmentsSummary",
    default_repo_id="ai-and/termgrade-environments",
    rows=(RowKind("tasks", f"{_B}.rows:TaskRow", ("task_id",), archives=True),
          RowKind("labels", "termgrade.records.label:LabelRow",
                  ("task_id", "model", "scaffold"))),
))

register_repo_kind(RepoKind(
    name="trajectories",
    about="Every trial as SFT messages, full episodes and a Hub agent trace.",
    builder=f"{_B}.trajectories:build_trajectories",
    summary=f"{_B}.trajectories:TrajectoriesSummary",
    default_repo_id="ai-and/termgrade-trajectories",
    rows=(RowKind("sft", f"{_B}.rows:SftRow", ("trial_id",)),
          RowKind("episodes", f"{_B}.rows:EpisodeRow", ("trial_id",)),
          RowKind("traces", f"{_B}.rows:TraceRow", ("trial_id",))),
    checks=("termgrade.validate.trajectories_check:check_trajectories",),
))

register_repo_kind(RepoKind(
    name="bandcentral",
    about="Selected train + validation tasks with base pass rates, and verl's prompt table.",
    builder=f"{_B}.bandcentral:build_bandcentral",
    summary=f"{_B}.bandcentral:BandcentralSummary",
    default_repo_id="ai-and/termgrade-bandcentral-gemma4-31b-bash",
    rows=(RowKind("tasks", f"{_B}.rows:BandcentralTaskRow", ("task_id",), archives=True),
          RowKind("verl", f"{_B}.verl_prompts:VerlPromptRow", ("extra_info.task_id",))),
))
