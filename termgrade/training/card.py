"""A run's real config and metrics, for the checkpoint card (``build checkpoint-card --run``).

The card's ``training_config.yaml`` is then what the run used (``run.json``: the recipe,
the verl overrides, the pinned versions, the deviations from the paper), and its
"Training run" section is the per-step table ``train monitor`` reads from verl's metrics.
A run with no metrics yet is said to be one: the card never describes a run as done
because a recipe exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termgrade.training.monitor import markdown_table, read_metrics, step_rows
from termgrade.training.paths import RunPaths
from termgrade.training.prepare import read_record


@dataclass(frozen=True)
class RunForCard:
    config: dict[str, Any]
    """``training_config.yaml``."""
    section: str
    """Markdown of the card's "Training run" section."""
    steps: int
    """Training steps with metrics (0: the run has not produced any)."""


def run_for_card(run: Path) -> RunForCard:
    paths = RunPaths(run)
    record = read_record(paths.record)
    recipe = record.recipe
    config: dict[str, Any] = {
        "base_model": recipe["base_model"],
        "dataset": record.source,
        "framework": "verl " + record.pins.get("verl", "?"),
        "algorithm": "GRPO++ (GRPO with DAPO changes, Dr.GRPO advantages)",
        "adapter": {"type": "lora", "rank": recipe["lora_rank"], "alpha": recipe["lora_alpha"]},
        "recipe": recipe,
        "verl_overrides": record.overrides,
        "pins": record.pins,
        "deviations_from_the_paper": record.deviations,
        "tasks": {name: split.tasks for name, split in record.splits.items()},
    }
    batch = int(recipe["train_batch_size"])
    rows = step_rows(read_metrics(paths.metrics), batch) if paths.metrics.is_file() else []
    trained = [r for r in rows if r.gen_batches is not None]
    if not trained:
        section = ("_This run has produced no training metrics_ (prepared "
                   f"{record.created_at}, not run, or still before its first update).")
    else:
        section = (f"{len(trained)} update(s) logged by verl (`metrics.jsonl`); "
                   "`gen batches` is the re-band signal (generation batches one update "
                   "needed; the paper saw 2, capped at 10).\n\n" + markdown_table(rows, batch))
    return RunForCard(config=config, section=section, steps=len(trained))
