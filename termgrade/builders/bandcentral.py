"""``termgrade build bandcentral``: the selected train + validation tasks, ready for verl.

Inputs: task dirs, ``--splits`` (SplitRow JSONL: tasks flagged ``train151`` go to
``train``, ``heldout120`` to ``validation``) and optional ``--labels`` (the base model's
pass rates; ``--model`` / ``--scaffold`` pick one when the labels hold several). Output::

    README.md                                  card (templates/bandcentral.md)
    data/tasks/{train,validation}-*.parquet    config "tasks" (default): task rows + base pass rate
    data/verl/{train,validation}-*.parquet     config "verl": the rows `train prepare` writes
    tasks/<task_id>/..., registry.json         Harbor-runnable task tree
    selection/selection.{json,md,png}          the report of the select run (--selection-report)
    figures/base_pass_rate.png

Unattested tasks (:func:`termgrade.audit.attestable.attestability`, or a base label that
says ``attested: false``) are left out unless ``include_unattested``; the summary names
them either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from termgrade.audit.attestable import unattested_tasks
from termgrade.builders.bandcentral_card import BandcentralSummary as BandcentralSummary
from termgrade.builders.bandcentral_card import render_bandcentral_card
from termgrade.builders.card_prose import load_card_prose
from termgrade.builders.common import copy_tree, place_secrets_baseline, staged_directory
from termgrade.builders.errors import BuildError
from termgrade.builders.inputs import Inputs, RecordSource, load_inputs
from termgrade.builders.kinds import repo_kind
from termgrade.builders.layout import RepoPaths
from termgrade.builders.licensing import Origin, known_license
from termgrade.builders.parquet_writer import ParquetSplitWriter
from termgrade.builders.rows import BandcentralTaskRow, schema_for
from termgrade.builders.selection_files import find_selection_report, ship_selection_report
from termgrade.builders.task_rows import (
    LEGACY_ROLES,
    base_image_files,
    registry_entries,
    task_row,
    write_registry,
    write_task_tree,
)
from termgrade.builders.verl_prompts import VerlPromptRow, verl_prompt_row
from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import OptionError
from termgrade.records import LabelRow
from termgrade.sandbox.images import BASE_IMAGE_DIR

DEFAULT_REPO_ID = repo_kind("bandcentral").default_repo_id


def _base_labels(labels: list[LabelRow], model: str | None,
                 scaffold: str | None) -> dict[str, LabelRow]:
    chosen = [r for r in labels if (model is None or r.model == model)
              and (scaffold is None or r.scaffold == scaffold)]
    configs = sorted({(r.model, r.scaffold) for r in chosen})
    if labels and not configs:
        raise BuildError(f"no labels for model {model!r} / scaffold {scaffold!r}",
                         fix="pick one of: " + ", ".join(sorted({f"{r.model} / {r.scaffold}"
                                                                 for r in labels})))
    if len(configs) > 1:
        raise BuildError(f"labels hold {len(configs)} model configurations",
                         fix="pass --model (and --scaffold) of the base model: "
                         + ", ".join(f"{m} / {s}" for m, s in configs))
    return {r.task_id: r for r in chosen}


def _selected(inputs: Inputs, split_map: dict[str, str]) -> dict[str, list[str]]:
    """Task ids per output split. A split row's ``role`` decides, whatever its split is
    named (``termgrade select --n 10`` names them train10 / heldout8); a row without one
    (an older file) goes by ``split_map``."""
    chosen: dict[str, list[str]] = {out: [] for out in ("train", "validation")}
    wrong = sorted(set(split_map.values()) - set(chosen))
    if wrong:
        raise OptionError(f"split_map sends splits to {', '.join(wrong)}",
                          fix="map split names to 'train' or 'validation'")
    for task_id, row in sorted(inputs.splits.items()):
        role = row.role or split_map.get(row.split)
        if role is not None:
            chosen[role].append(task_id)
    if not any(chosen.values()):
        raise BuildError("no task in --splits was selected for train or validation (no "
                         "row has a role, and none is flagged " + " or ".join(split_map) + ")",
                         fix="pass the --splits file `termgrade select` wrote")
    for role in ("train", "validation"):
        if not chosen[role]:
            # `train prepare` needs both: without one it would call this no bandcentral repo.
            raise BuildError(
                f"no task in --splits was selected for {role}: a bandcentral repo needs "
                "train and validation tasks (`termgrade train prepare` reads both)",
                fix="rerun `termgrade select` with --val-n N (N > 0: validation tasks per "
                "target) and --n N (training tasks), and pass the --splits file it writes"
                if role == "validation" else
                "rerun `termgrade select` with --n N (N > 0) and pass the --splits file")
    return chosen


def _unattested(inputs: Inputs, base: dict[str, LabelRow],
                chosen: dict[str, list[str]]) -> dict[str, str]:
    ids = [t for task_ids in chosen.values() for t in task_ids]
    found = unattested_tasks(inputs.tasks[t] for t in ids)
    for task_id in ids:
        label = base.get(task_id)
        if label is not None and label.attested is False and task_id not in found:
            found[task_id] = "its base labels say attested: false"
    return found


def build_bandcentral(
    out: Path,
    *,
    splits: RecordSource,
    task_roots: Sequence[Path] = (Path("environments"),),
    labels: RecordSource | None = None,
    verify: RecordSource | None = None,
    model: str | None = None,
    scaffold: str | None = None,
    split_map: dict[str, str] | None = None,
    base_image: Path = BASE_IMAGE_DIR,
    secrets_baseline: Path | None = None,
    selection_report: Path | None = None,
    card_prose: Path | None = None,
    repo_id: str = DEFAULT_REPO_ID,
    overwrite: bool = False,
    license: str | None = None,
    include_unattested: bool = False,
) -> BandcentralSummary:
    """Stage the bandcentral repo at ``out``: with the base image recipe every task's
    Dockerfile starts FROM, and the reviewed secret findings of the task files placed
    beside it (see :func:`~termgrade.builders.common.place_secrets_baseline`).
    ``selection_report``: the ``<splits>.selection.json`` of the ``termgrade select`` run
    that chose the tasks (default: the one beside a ``splits`` file); shipped with its
    markdown and plot under ``selection/`` and linked from the card. ``card_prose``:
    overrides of the card's prose sections. ``license``: the tasks' license when their
    task.toml files do not state it (:mod:`.licensing`; unknown: the card claims none).
    ``include_unattested``: ship unattested selected tasks too (left out by default;
    :attr:`BandcentralSummary.unattested` names them either way)."""
    prose = load_card_prose(card_prose) if card_prose is not None else None
    report_json = find_selection_report(splits, selection_report)
    inputs = load_inputs(task_roots, splits=splits, labels=labels, verify=verify)
    base = _base_labels(inputs.labels, model, scaffold)
    chosen = _selected(inputs, split_map or LEGACY_ROLES)
    summary = BandcentralSummary(out=Path(out), included_unattested=include_unattested)
    summary.unattested = _unattested(inputs, base, chosen)
    if not include_unattested:
        chosen = {s: [t for t in ids if t not in summary.unattested] for s, ids in chosen.items()}
        if not any(chosen.values()):
            raise BuildError("every selected task is unattested: "
                             + ", ".join(summary.unattested),
                             fix="pass --include-unattested to ship them anyway")
    if base:
        first = next(iter(base.values()))
        summary.base_model, summary.base_scaffold = first.model, first.scaffold
    with staged_directory(Path(out), overwrite=overwrite) as stage:
        paths = RepoPaths(stage)
        for out_split, task_ids in chosen.items():
            if task_ids:
                _write_split(paths, inputs, base, out_split, task_ids, summary)
        selected = [inputs.tasks[t] for ids in chosen.values() for t in ids]
        summary.origins = [Origin.of(t.config.metadata) for t in selected]
        summary.license = known_license(summary.origins, license)
        write_task_tree(paths, selected, inputs.verify)
        write_registry(paths, [registry_entries(paths, f"termgrade-bandcentral-{s}", "1.0",
                                                f"Band-central {s} tasks", ids)
                               for s, ids in chosen.items() if ids])
        copy_tree(base_image, paths.base_image_dir, base_image_files(base_image))
        if report_json is not None:
            summary.selection_report = ship_selection_report(paths, report_json, chosen)
        atomic_write_text(paths.readme, render_bandcentral_card(paths, summary, repo_id=repo_id,
                                                                 prose=prose))
    summary.secrets_baseline = place_secrets_baseline(Path(out), task_roots, secrets_baseline)
    return summary


def _write_split(paths: RepoPaths, inputs: Inputs, base: dict[str, LabelRow], out_split: str,
                 task_ids: list[str], summary: BandcentralSummary) -> None:
    tasks = ParquetSplitWriter(paths.config_dir("tasks"), out_split,
                               schema_for(BandcentralTaskRow))
    verl = ParquetSplitWriter(paths.config_dir("verl"), out_split, schema_for(VerlPromptRow))
    rates: list[float | None] = []
    for index, task_id in enumerate(task_ids):
        row = task_row(inputs.tasks[task_id], inputs.splits[task_id].split,
                       inputs.verify.get(task_id))
        label = base.get(task_id)
        rate = label.pass_rate if label is not None else inputs.splits[task_id].pass_rate
        full = BandcentralTaskRow(
            **row.model_dump(),
            base_model=label.model if label else None,
            base_scaffold=label.scaffold if label else None,
            base_pass_rate=rate, band=label.band if label else None,
            n_counted=label.n_counted if label else None, k=label.k if label else None)
        tasks.add(full.model_dump(), where=f"task {task_id}")
        prompt = verl_prompt_row(task_id=task_id, instruction=row.instruction,
                                 archive_sha256=row.archive_sha256, split=out_split,
                                 index=index, base_pass_rate=rate, domain=row.domain,
                                 difficulty=row.difficulty)
        verl.add(prompt.model_dump(), where=f"task {task_id}")
        rates.append(rate)
    summary.rates[out_split] = rates
    for writer in (tasks, verl):
        summary.files += [paths.rel(p) for p in writer.close().paths]
