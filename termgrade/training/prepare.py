"""``termgrade train prepare``: everything a verl run needs, in one directory.

From the bandcentral repo (a directory or a Hub id) it writes the run directory
(:class:`~termgrade.training.paths.RunPaths`): the train and validation parquet, the tasks
they name, the agent-loop config, the launch script and ``run.json``, the record of every
choice. The overrides are composed with verl's own config first (when verl is installed),
so a key verl does not know fails here, not on the GPU node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from termgrade.audit.attestable import exclusion_note
from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import OptionError
from termgrade.core.version import __version__
from termgrade.records.version import RecordFormat, validate_record
from termgrade.training.checks import composed_errors, preflight
from termgrade.training.data import (
    SPLITS,
    SplitData,
    local_repo,
    prepare_split,
    read_tasks,
    repo_identity,
    write_split,
)
from termgrade.training.launch import PINS, render_launch_script
from termgrade.training.models import ModelChoice, choose_model
from termgrade.training.paths import RunPaths
from termgrade.training.prepare_readme import readme_path, render_readme
from termgrade.training.recipe import (
    GrpoRecipe,
    RunPlaces,
    as_hydra,
    run_overrides,
    smoke_recipe,
    training_loop,
)

SCHEMA_VERSION = 1
RUN_FORMAT = RecordFormat(schema="run", version=str(SCHEMA_VERSION),
                          writer="termgrade train prepare")
"""run.json's format (its ``schema_version`` is written as a number)."""
DEVIATIONS = (
    "Dynamic sampling: verl 0.9.1's V1 trainer ignores max_num_gen_batches (it evicts an "
    "all-equal group and refills with two prompts, uncapped). Rendered as 0 with "
    "max_inflight_gen_batches=2; the cap of 10 is the monitor's regrade warning on the "
    "gen_batches analogue.",
    "Per-turn token cap: verl's sampling params carry none; the agent loop sends "
    "max_tokens = min(max_tokens_per_turn, what is left of the response length).",
    "Unscored trials (an engine failure before the agent acted) get reward 0.0 with an "
    "all-zero response mask, so none of their tokens carry gradient; the paper does not "
    "say how it treated them.",
    "Metrics go to verl's file logger (metrics.jsonl) as well as the console, for the "
    "monitor; the paper's logger is not stated.",
)


class SplitRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: int = Field(description="Prompt rows in the split.")
    task_ids: list[str] = Field(description="The tasks, in row order.")
    mean_base_pass_rate: float | None = Field(description="Mean measured base pass rate.")


class RunRecord(BaseModel):
    """``run.json``: what was prepared, from what, with which choices."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Annotated[int, RUN_FORMAT] = Field(SCHEMA_VERSION,
                                                       description="Version of this record.")
    created_at: str = Field(description="UTC time of `train prepare`.")
    termgrade_version: str = Field(description="TermGrade that wrote the run.")
    source: str = Field(description="The bandcentral repo given (directory or Hub id).")
    revision: str | None = Field(description="Hub revision asked for, if any.")
    recipe: dict[str, Any] = Field(description="GrpoRecipe: every value of the run.")
    recipe_sources: dict[str, str] = Field(description="Where each value comes from.")
    overrides: list[str] = Field(description="The verl overrides, as launch.sh passes them.")
    pins: dict[str, str] = Field(description="Versions launch.sh requires on the node.")
    splits: dict[str, SplitRecord] = Field(description="train and validation.")
    deviations: list[str] = Field(description="Where the run departs from the paper, and why.")
    verl_checked: bool = Field(description="The overrides were composed with verl's config.")
    selected_for_model: str | None = Field(
        None, description="The model the repo's tasks were selected for (base_model).")
    selected_for_scaffold: str | None = Field(
        None, description="The scaffold they were graded in (base_scaffold).")
    tool_parser_source: str | None = Field(
        None, description="Why recipe.tool_format: the model's family or --tool-parser.")
    smoke: bool = Field(False, description="A one-GPU smoke run (train prepare --smoke).")
    warnings: list[str] = Field(default_factory=list,
                                description="What prepare warned about, e.g. another model.")


def read_record(path: Path) -> RunRecord:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise OptionError(f"{path}: unreadable run record ({exc})",
                          fix="prepare the run with `termgrade train prepare`") from exc
    if not isinstance(data, dict):
        raise OptionError(f"{path}: schema_version None, this TermGrade reads "
                          f"{SCHEMA_VERSION}", fix="prepare the run again")
    data.setdefault("schema_version", None)  # absent is refused, not taken as current
    try:
        return validate_record(RunRecord, data)
    except ValidationError as exc:
        if not any(e["loc"][:1] == ("schema_version",) for e in exc.errors()):
            raise
        raise OptionError(f"{path}: schema_version {data['schema_version']!r}, this "
                          f"TermGrade reads {SCHEMA_VERSION}",
                          fix="prepare the run again") from None


def run_places(recipe: GrpoRecipe) -> RunPlaces:
    """File locations as launch.sh sees them: under ``$RUN_DIR``, so the directory moves."""
    del recipe
    return RunPlaces(train_files="$RUN_DIR/data/train.parquet",
                     val_files="$RUN_DIR/data/validation.parquet",
                     agent_loop_config="$RUN_DIR/agent_loop.yaml",
                     checkpoints="$RUN_DIR/checkpoints")


def agent_loop_config(recipe: GrpoRecipe, *, include_unattested: bool = False,
                      scaffold: str | None = None) -> list[dict[str, Any]]:
    """verl's agent-loop config file: registers the training loop of ``scaffold`` (the
    default one, :class:`BashAgentLoop`, unless named; the scaffold door says which loop)
    under its name. ``include_unattested``: the loop grades unattested tasks (refuses them
    otherwise)."""
    loop = training_loop(scaffold)
    return [{
        "name": loop.name,
        "_target_": loop.hydra_target,
        "max_tokens_per_turn": recipe.max_tokens_per_turn,
        "max_concurrent_trajectories": recipe.max_concurrent_trajectories,
        "tool_format": recipe.tool_format,
        "include_unattested": include_unattested,
    }]


UNCHECKED_WITHOUT_VERL = (
    "verl is not installed here, so the overrides were not composed with its ppo_trainer "
    "config: a key verl does not know, and a value its config interpolates, would only "
    "fail on the node (the recipe's own limits were checked)")


def _check_with_verl(overrides: list[str], recipe: GrpoRecipe) -> bool:
    """Compose with verl's config whenever its files are here (always through Hydra) and
    check the composed values; False when verl is not installed."""
    from termgrade.training.verl_config import compose_verl_config, find_verl_config_dir

    if find_verl_config_dir() is None:
        return False
    concrete = [o.replace("$RUN_DIR", "/run") for o in overrides]
    errors = composed_errors(compose_verl_config(concrete), recipe)
    if errors:
        raise OptionError("verl's composed config would fail on the node: "
                          + "; ".join(errors), fix="change the option named; nothing was "
                          "written")
    return True


def _check_run_files(paths: RunPaths, splits: dict[str, SplitData]) -> None:
    """Every file the agent loop opens on the node: each row's task and tests, the agent
    loop's config."""
    missing = [f"{split}: {row['extra_info'][key]}"
               for split, data in splits.items() for row in data.rows
               for key in ("task_dir", "tests_dir")
               if not (paths.root / row["extra_info"][key]).is_dir()]
    if not paths.agent_loop_config.is_file():
        missing.append(str(paths.agent_loop_config))
    if missing:
        raise OptionError(f"{paths.root}: the agent loop would not find "
                          + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""),
                          fix="prepare the run again into a new -o directory")


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


@dataclass(frozen=True)
class Prepared:
    paths: RunPaths
    record: RunRecord
    choice: ModelChoice


@dataclass(frozen=True)
class ModelRequest:
    """What ``train prepare`` was asked about the model (see :func:`choose_model`)."""

    base_model: str | None = None
    tool_parser: str | None = None
    train_other_model: bool = False
    smoke: bool = False


def _unattested_note(splits: dict[str, SplitData], include: bool) -> str | None:
    found = sorted({t for data in splits.values() for t in data.unattested})
    if not found:
        return None
    return exclusion_note(found, included=include, what="the run")


def _smoke(recipe: GrpoRecipe) -> GrpoRecipe:
    """The smoke run's one step on one GPU, keeping what was asked (``--batch-size 1``
    for a repo of one training task, ``--steps``): the smoke values fill the rest."""
    asked = {name: getattr(recipe, name) for name in recipe.model_fields_set}
    return smoke_recipe(recipe).model_copy(update=asked)


def prepare_run(source: str, out: Path, *, recipe: GrpoRecipe | None = None,
                revision: str | None = None, model: ModelRequest | None = None,
                include_unattested: bool = False) -> Prepared:
    """Write the run directory ``out`` from the bandcentral repo ``source``: the model the
    repo was selected for (``model`` may ask for another), verl's run-time limits checked
    before anything is written. Unattested tasks get no prompt row (and the agent loop
    refuses them) unless ``include_unattested``; run.json's warnings name them."""
    recipe = recipe or GrpoRecipe()
    model = model or ModelRequest()
    paths = RunPaths(out)
    if paths.record.exists():
        raise OptionError(f"{paths.record} exists: {out} already holds a run",
                          fix="choose a new -o directory (runs are not overwritten)")
    repo = local_repo(source, revision=revision)
    identity = repo_identity(repo)
    choice = choose_model(identity.model, identity.scaffold, default=recipe.base_model,
                          asked=model.base_model, tool_parser=model.tool_parser,
                          train_other_model=model.train_other_model, smoke=model.smoke)
    if model.smoke:
        recipe = _smoke(recipe)
    recipe = recipe.model_copy(update={"base_model": choice.model,
                                       "tool_format": choice.tool_parser})
    counts = {split: len(read_tasks(repo, split)) for split in SPLITS}
    checks = preflight(recipe, n_train=counts["train"], n_val=counts["validation"])
    checks.raise_errors()
    overrides = as_hydra(run_overrides(recipe, run_places(recipe), choice.train_scaffold))
    checked = _check_with_verl(overrides, recipe)
    warnings = [*choice.warnings, *checks.warnings]
    if not checked:
        warnings.append(UNCHECKED_WITHOUT_VERL)
    splits: dict[str, SplitData] = {
        split: prepare_split(repo, paths, split, include_unattested=include_unattested)
        for split in SPLITS}
    note = _unattested_note(splits, include_unattested)
    if note is not None:
        warnings.append(note)
        if not include_unattested:  # fewer tasks than the repo rows checked above
            preflight(recipe, n_train=len(splits["train"].rows),
                      n_val=len(splits["validation"].rows)).raise_errors()
    for split, data in splits.items():
        write_split(paths.split_file(split), data)
    atomic_write_text(paths.agent_loop_config,
                      yaml.safe_dump(agent_loop_config(recipe,
                                                       include_unattested=include_unattested,
                                                       scaffold=choice.train_scaffold),
                                     sort_keys=False))
    _check_run_files(paths, splits)
    atomic_write_text(paths.launch_script, render_launch_script(overrides))
    paths.launch_script.chmod(0o755)
    atomic_write_text(readme_path(paths), render_readme(paths, recipe, smoke=model.smoke))
    fields = GrpoRecipe.model_fields
    record = RunRecord(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        termgrade_version=__version__, source=source, revision=revision,
        recipe=recipe.model_dump(),
        recipe_sources={name: info.description or "" for name, info in fields.items()},
        overrides=overrides, pins=dict(PINS),
        splits={s: SplitRecord(tasks=len(d.rows), task_ids=d.task_ids,
                               mean_base_pass_rate=_mean(d.base_pass_rates))
                for s, d in splits.items()},
        deviations=list(DEVIATIONS), verl_checked=checked,
        selected_for_model=choice.selected_for, selected_for_scaffold=choice.scaffold,
        tool_parser_source=choice.parser_source, smoke=model.smoke, warnings=warnings)
    atomic_write_text(paths.record, record.model_dump_json(indent=2) + "\n")
    return Prepared(paths, record, choice)
