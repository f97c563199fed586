"""The repo-kind door: one record per dataset repo kind, the only list of them.

A :class:`RepoKind` says everything the rest of TermGrade needs to know about a kind of
staged dataset repo: its builder and what the builder returns, its configs and their row
models (with each model's key columns, and whether its rows carry task archives), its card
module, the extra checks ``validate`` runs on it, and its default Hub repo id. ``build``
(:func:`build_repo`, ``termgrade build``), ``validate`` (the schema registry, the key and
archive checks), the CLI's defaults and the public API (``termgrade.build_*``) read it
from :func:`repo_kinds`; no other module lists the kinds.

Adding a kind (docs/architecture.md, "Adding a repo kind"): write its builder, row models
and card under ``builders/``, then call :func:`register_repo_kind` once, here (a kind
TermGrade ships) or from your own code (a kind of yours, registered before you build).

Everything here is a dotted ``module:name`` string, resolved on first use, so the public
API can list the builders without importing pydantic or pyarrow.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def resolve(target: str) -> Any:
    """The object a ``module:name`` string names."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


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
    card: str
    """The module that renders the kind's dataset card."""
    rows: tuple[RowKind, ...]
    checks: tuple[str, ...] = field(default=())
    """``module:function`` checks ``validate`` runs on a repo holding this kind's rows, each
    called as ``f(paths: RepoPaths, report: ValidationReport)``."""

    @property
    def builder_name(self) -> str:
        return self.builder.partition(":")[2]

    @property
    def summary_name(self) -> str:
        return self.summary.partition(":")[2]

    def build(self, out: Path, **options: Any) -> Any:
        builder: Callable[..., Any] = resolve(self.builder)
        return builder(out, **options)


_KINDS: dict[str, RepoKind] = {}
_VERSION = [0]
"""Bumped on every (un)registration: readers cache what they derive per version."""


def registry_version() -> int:
    """Changes whenever a kind is registered or removed (a cache key for derived lists)."""
    return _VERSION[0]


def register_repo_kind(kind: RepoKind) -> RepoKind:
    """Add a kind to the registry (its name and builder must be new)."""
    if kind.name in _KINDS:
        raise ValueError(f"repo kind {kind.name!r} is already registered")
    if any(k.builder_name == kind.builder_name for k in _KINDS.values()):
        raise ValueError(f"repo kind {kind.name!r}: a builder named {kind.builder_name!r} "
                         "is already registered")
    _KINDS[kind.name] = kind
    _VERSION[0] += 1
    return kind


def unregister_repo_kind(name: str) -> None:
    """Remove a kind (a test's own kind, once the test is done)."""
    if _KINDS.pop(name, None) is not None:
        _VERSION[0] += 1


def repo_kinds() -> tuple[RepoKind, ...]:
    """Every registered kind, in registration order."""
    return tuple(_KINDS.values())


def repo_kind(name: str) -> RepoKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"no repo kind {name!r} (known: {', '.join(_KINDS)})") from None


def build_repo(kind: str, out: Path, **options: Any) -> Any:
    """Stage a repo of ``kind`` at ``out`` with its builder's ``options``."""
    return repo_kind(kind).build(out, **options)


def row_kinds() -> tuple[RowKind, ...]:
    """Every config's rows of every kind (a model shared by two kinds appears twice)."""
    return tuple(row for kind in _KINDS.values() for row in kind.rows)


def api_names() -> dict[str, str]:
    """Each kind's builder and summary, by public name -> defining module."""
    names: dict[str, str] = {}
    for kind in _KINDS.values():
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
    card=f"{_B}.environments_card",
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
    card=f"{_B}.trajectories_card",
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
    card=f"{_B}.bandcentral_card",
    rows=(RowKind("tasks", f"{_B}.rows:BandcentralTaskRow", ("task_id",), archives=True),
          RowKind("verl", f"{_B}.verl_prompts:VerlPromptRow", ("extra_info.task_id",))),
))
