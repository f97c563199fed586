"""``termgrade build environments``: the task repo (tasks, labels, split flags, base image).

Inputs: task dirs (default ``environments/``); optional ``--labels`` (LabelRow JSONL),
``--splits`` (SplitRow JSONL; tasks without a flag are ``unseen``) and ``--verify``
(VerifyRecord JSONL from ``termgrade verify -o``). Output layout (see
:class:`~termgrade.builders.layout.RepoPaths`)::

    README.md                                   card from DATASET_CARD.md
    data/tasks/<split>-00000-of-00001.parquet   config "tasks" (default; splits unseen,
                                                train151, heldout120)
    data/labels/train-00000-of-00001.parquet    config "labels"
    labels.jsonl                                the same labels as JSONL
    tasks/<task_id>/...                         Harbor-runnable task tree
    registry.json                               Harbor registry of tasks/
    base_image/...                              the base image recipe
    figures/pass_rate_hist.png, figures/domain_difficulty.png
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from termgrade.builders.card_prose import load_card_prose
from termgrade.builders.common import copy_tree, place_secrets_baseline, staged_directory
from termgrade.builders.environments_card import EnvironmentsSummary as EnvironmentsSummary
from termgrade.builders.environments_card import (
    ShippedTask,
    corpus_license,
    render_environments_card,
)
from termgrade.builders.inputs import Inputs, RecordSource, load_inputs
from termgrade.builders.kinds import repo_kind
from termgrade.builders.layout import RepoPaths
from termgrade.builders.parquet_writer import ParquetSplitWriter
from termgrade.builders.rows import TaskRow, schema_for
from termgrade.builders.task_rows import (
    DEFAULT_SPLIT,
    LEGACY_ROLES,
    base_image_files,
    ordered_splits,
    registry_entries,
    task_row,
    write_registry,
    write_task_tree,
)
from termgrade.core.atomic import atomic_write_jsonl, atomic_write_text
from termgrade.core.progress import track
from termgrade.records.label import LabelRow
from termgrade.sandbox.images import BASE_IMAGE_DIR

DEFAULT_REPO_ID = repo_kind("environments").default_repo_id
LABELS_SPLIT = "train"


def _origin(metadata: dict[str, object]) -> tuple[str, str, str | None]:
    def text(*keys: str) -> str | None:
        for key in keys:
            value = metadata.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return None

    return (text("author", "author_name") or "unknown", text("source") or "unknown",
            text("generator", "generator_model", "generated_by"))


def _license(metadata: dict[str, object]) -> str | None:
    value = metadata.get("license")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _write_tasks_config(paths: RepoPaths, inputs: Inputs, summary: EnvironmentsSummary) -> None:
    split_of = {t: (inputs.splits[t].split if t in inputs.splits else DEFAULT_SPLIT)
                for t in inputs.tasks}
    schema = schema_for(TaskRow)
    writers = {s: ParquetSplitWriter(paths.config_dir("tasks"), s, schema)
               for s in ordered_splits(set(split_of.values()))}
    with track("tasks", total=len(inputs.tasks)) as bar:
        for task_id, task in inputs.tasks.items():
            row: TaskRow = task_row(task, split_of[task_id], inputs.verify.get(task_id))
            writers[row.split].add(row.model_dump(), where=f"task {task_id}")
            summary.tasks.append(ShippedTask(task_id, row.split, row.domain or "unknown",
                                             row.difficulty or "unknown", row.oracle_verified,
                                             row.n_assertions, _origin(task.config.metadata),
                                             _license(task.config.metadata)))
            bar.advance()
    for task_id, flag in inputs.splits.items():
        role = flag.role or LEGACY_ROLES.get(flag.split)
        if role is not None and task_id in inputs.tasks:
            summary.split_roles[flag.split] = role
    for split, writer in writers.items():
        result = writer.close()
        summary.split_counts[split] = result.rows
        summary.files += [paths.rel(p) for p in result.paths]


def _write_labels(paths: RepoPaths, inputs: Inputs, summary: EnvironmentsSummary) -> None:
    labels = inputs.labels
    if inputs.splits:  # the join key users filter on, on every label row
        labels = [r.model_copy(update={"split": inputs.splits[r.task_id].split
                                       if r.task_id in inputs.splits else DEFAULT_SPLIT})
                  for r in labels]
    writer = ParquetSplitWriter(paths.config_dir("labels"), LABELS_SPLIT, schema_for(LabelRow))
    for row in labels:
        writer.add(row.model_dump(), where=f"label {row.task_id}/{row.model}/{row.scaffold}")
    summary.files += [paths.rel(p) for p in writer.close().paths]
    summary.n_labels = len(labels)
    atomic_write_jsonl(paths.labels_jsonl, (r.model_dump(mode="json") for r in labels))


def build_environments(
    out: Path,
    *,
    task_roots: Sequence[Path] = (Path("environments"),),
    labels: RecordSource | None = None,
    splits: RecordSource | None = None,
    verify: RecordSource | None = None,
    models: Sequence[str] | None = None,
    base_image: Path = BASE_IMAGE_DIR,
    repo_id: str = DEFAULT_REPO_ID,
    overwrite: bool = False,
    secrets_baseline: Path | None = None,
    card_prose: Path | None = None,
    license: str | None = None,
) -> EnvironmentsSummary:
    """Stage the environments repo at ``out`` (built beside it, renamed when complete).

    ``secrets_baseline``: reviewed detect-secrets findings of the task files (default:
    ``secrets.baseline`` in the first task root, if present), copied beside the repo
    where :func:`~termgrade.validate.validate_repo` and ``publish`` read it.
    ``models``: keep only these models' labels; without it every model in ``labels`` must
    have a label for every task. ``card_prose``: overrides of the card's prose sections
    (:mod:`termgrade.builders.card_prose`). ``license``: the tasks' license (an SPDX id,
    e.g. ``mit``) when their ``task.toml`` files do not state it; without it the card
    claims none (:func:`corpus_license`).
    """
    prose = load_card_prose(card_prose) if card_prose is not None else None
    inputs = load_inputs(task_roots, splits=splits, labels=labels, verify=verify, models=models)
    summary = EnvironmentsSummary(out=Path(out))
    with staged_directory(Path(out), overwrite=overwrite) as stage:
        paths = RepoPaths(stage)
        _write_tasks_config(paths, inputs, summary)
        if inputs.labels:
            _write_labels(paths, inputs, summary)
        summary.license = corpus_license(summary.tasks, license)
        tasks = list(inputs.tasks.values())
        write_task_tree(paths, tasks, inputs.verify)
        datasets = [registry_entries(paths, "termgrade-environments", "1.0",
                                     "Every TermGrade task", [t.task_id for t in tasks])]
        for split in summary.split_counts:
            ids = [t.task_id for t in summary.tasks if t.split == split]
            datasets.append(registry_entries(paths, f"termgrade-{split}", "1.0",
                                             f"TermGrade tasks flagged {split}", ids))
        write_registry(paths, datasets)
        copy_tree(base_image, paths.base_image_dir, base_image_files(base_image))
        atomic_write_text(paths.readme, render_environments_card(paths, summary, inputs.labels,
                                                                 repo_id=repo_id,
                                                                 prose=prose))
    summary.secrets_baseline = place_secrets_baseline(Path(out), task_roots, secrets_baseline)
    return summary
