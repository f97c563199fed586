"""``termgrade build checkpoint-card``: the model card of a LoRA adapter repo.

Inputs: a training config (YAML; default :data:`DEFAULT_TRAIN_CONFIG`, the recipe of the
paper) and a results file (JSON: a list of :class:`ResultRow`, or ``{"results": [...]}``).
Output: ``README.md`` (card with YAML front matter) and ``training_config.yaml``. The
adapter weights themselves are added beside them by training / publishing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from termgrade.builders.card import (
    front_matter,
    load_template,
    markdown_table,
    render_template,
)
from termgrade.builders.card_prose import CardProse, load_card_prose, with_prose
from termgrade.builders.common import staged_directory
from termgrade.builders.kinds import repo_kind
from termgrade.builders.layout import RepoPaths
from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import RecordError

DEFAULT_REPO_ID = "ai-and/termgrade-gemma4-31b-grpo-lora"

DEFAULT_TRAIN_CONFIG: dict[str, Any] = {
    "base_model": "google/gemma-4-31B-it",
    "dataset": repo_kind("bandcentral").default_repo_id,
    "framework": "verl",
    "algorithm": "GRPO++ (GRPO with DAPO changes, Dr.GRPO advantages)",
    "adapter": {"type": "lora", "rank": 32},
    "learning_rate": 1.0e-5,
    "kl": {"use_kl_in_reward": False, "use_kl_loss": False},
    "clip_ratio_low": 0.2,
    "clip_ratio_high": 0.28,
    "loss_agg_mode": "token-mean",
    "norm_adv_by_std_in_grpo": False,
    "reward": "binary (the task verifier's reward)",
    "filter_groups": {"enable": True, "metric": "acc", "max_num_gen_batches": 10},
    "train_batch_size": 16,
    "ppo_mini_batch_size": 16,
    "ppo_epochs": 1,
    "rollout_n": 16,
    "temperature": 0.6,
    "total_training_steps": 5,
    "test_freq": 1,
    "train_scaffold": "bash tool-calling",
    "eval_scaffold": "terminus-2",
    "hardware": "1 node, 8 x H200",
}
"""The recipe of SPEC section 8: GRPO++ with verl, LoRA rank 32, lr 1e-5, no KL,
clip 0.2 / 0.28, token-level loss, group-mean advantages, dynamic sampling (up to 10
generation batches), 16 prompts x 16 rollouts at temperature 0.6, 5 updates, validation
after every step."""


class ResultRow(BaseModel):
    """One line of the results table."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str = Field(description="e.g. terminal-bench-2.1.")
    metric: str = Field("pass@1", description="What the numbers measure.")
    scaffold: str | None = Field(None, description="Agent scaffold of the evaluation.")
    base: float | None = Field(None, description="The base model's score.")
    trained: float = Field(description="This adapter's score (mean over evaluations).")
    n_evaluations: int | None = Field(None, ge=1, description="Evaluations averaged.")
    stderr: float | None = Field(None, ge=0, description="Standard error of the mean.")
    notes: str | None = Field(None, description="Anything a reader needs to compare fairly.")


def load_results(path: Path) -> list[ResultRow]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RecordError(str(path), f"cannot read results: {exc}",
                          fix="pass a JSON file") from None
    rows = raw.get("results") if isinstance(raw, dict) else raw
    try:
        return TypeAdapter(list[ResultRow]).validate_python(rows)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RecordError(f"{path} [{where}]", first["msg"],
                          fix="each result needs benchmark and trained (see ResultRow)") from None


def load_train_config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return dict(DEFAULT_TRAIN_CONFIG)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise RecordError(str(path), f"cannot read the training config: {exc}",
                          fix="pass a YAML mapping") from None
    if not isinstance(data, dict):
        raise RecordError(str(path), "the training config is not a mapping",
                          fix="write it as `key: value` YAML")
    return data


def _flat(data: dict[str, Any], prefix: str = "") -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            rows += _flat(value, f"{prefix}{key}.")
        else:
            rows.append((f"`{prefix}{key}`", str(value)))
    return rows


def _results_table(results: list[ResultRow]) -> str:
    if not results:
        return "_Not evaluated yet._"
    return markdown_table(
        ("benchmark", "metric", "scaffold", "base", "this adapter", "delta", "evaluations",
         "s.e.", "notes"),
        [(r.benchmark, r.metric, r.scaffold, r.base, r.trained,
          None if r.base is None else f"{r.trained - r.base:+.2f}", r.n_evaluations,
          r.stderr, r.notes) for r in results])


ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")
"""What PEFT saves and loads: a repo holds an adapter when it has both."""


def render_checkpoint_card(config: dict[str, Any], results: list[ResultRow], *,
                           repo_id: str, has_adapter: bool = False,
                           prose: CardProse | None = None, run_section: str = "") -> str:
    base_model = str(config.get("base_model", "BASE_MODEL"))
    dataset = str(config.get("dataset", "DATASET"))
    adapter = config.get("adapter") if isinstance(config.get("adapter"), dict) else {}
    values = {
        "title": repo_id.split("/")[-1],
        "repo_id": repo_id,
        "base_model": base_model,
        "dataset": dataset,
        "lora_rank": str((adapter or {}).get("rank", "?")),
        "trained": "trained" if has_adapter else "to be trained",
        "status": "" if has_adapter else (
            "**This repo holds no adapter yet**: only this card and the training recipe "
            "(`training_config.yaml`) of a run that has not been uploaded. The Use section "
            "applies once `" + "` and `".join(ADAPTER_FILES) + "` are here."),
        "results_table": _results_table(results),
        "results_notes": "" if not results else
        "Scores are the adapter's measured results as given to `termgrade build "
        "checkpoint-card --results`; `delta` is this adapter minus the base.",
        "config_table": markdown_table(("setting", "value"), _flat(config)),
        "config_yaml": yaml.safe_dump(config, sort_keys=False),
        "run_section": ("## Training run\n\n" + run_section) if run_section else "",
    }
    meta = {
        "base_model": base_model,
        "library_name": "peft",
        "license": str(config.get("license", "gemma")),
        "pipeline_tag": "text-generation",
        "datasets": [dataset],
        "tags": ["lora", "grpo", "verl", "terminal-agents", "termgrade"],
    }
    text = with_prose(load_template("checkpoint.md"), prose, card="checkpoint")
    body = render_template(text, values, name="checkpoint.md")
    return front_matter(meta) + body


def build_checkpoint_card(out: Path, *, config: Path | None = None, results: Path | None = None,
                          adapter: Path | None = None, repo_id: str = DEFAULT_REPO_ID,
                          overwrite: bool = False, card_prose: Path | None = None,
                          run: Path | None = None) -> Path:
    """Stage ``README.md`` and ``training_config.yaml`` of an adapter repo at ``out``, and
    the adapter itself from ``adapter`` (a PEFT ``save_pretrained`` folder). Without one the
    card says the repo holds no adapter yet, rather than describing a run as done.

    ``run`` (a ``termgrade train prepare`` directory): the config is the run's own
    (``run.json``) and the card shows its logged metrics (:mod:`termgrade.training.card`)."""
    prose = load_card_prose(card_prose) if card_prose is not None else None
    run_section = ""
    if run is not None:
        if config is not None:
            raise RecordError(str(config), "--config and --run both given",
                              fix="pass one: --run takes the config from the run's run.json")
        from termgrade.training.card import run_for_card

        from_run = run_for_card(run)
        train_config, run_section = from_run.config, from_run.section
    else:
        train_config = load_train_config(config)
    rows = load_results(results) if results is not None else []
    if adapter is not None:
        missing = [name for name in ADAPTER_FILES if not (Path(adapter) / name).is_file()]
        if missing:
            raise RecordError(str(adapter), f"not a PEFT adapter folder: no {', '.join(missing)}",
                              fix="pass the folder `model.save_pretrained(DIR)` wrote")
    with staged_directory(Path(out), overwrite=overwrite) as stage:
        paths = RepoPaths(stage)
        atomic_write_text(paths.training_config, yaml.safe_dump(train_config, sort_keys=False))
        if adapter is not None:
            for name in ADAPTER_FILES:
                shutil.copyfile(Path(adapter) / name, paths.root / name)
        atomic_write_text(paths.readme, render_checkpoint_card(
            train_config, rows, repo_id=repo_id, has_adapter=adapter is not None, prose=prose,
            run_section=run_section))
    return Path(out)
