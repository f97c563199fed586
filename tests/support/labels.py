"""Shared helpers of the labels/stats/report/select tests (real files, real records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from termgrade.trialsets.synthetic import generate
from termgrade.trialsets.synthetic_config import SyntheticConfig, SyntheticModel


def trial(task: str = "t1", model: str = "m", attempt: int = 0, *, passed: bool = False,
          counted: bool = True, retry: int = 0, **extra: Any) -> dict[str, Any]:
    """A minimal valid TrialRecord dict."""
    row: dict[str, Any] = {
        "trial_id": f"{task}__{model}__{attempt}__{retry}", "task_id": task, "model": model,
        "scaffold": extra.pop("scaffold", "terminus-2"), "attempt": attempt,
        "reward": (1.0 if passed else 0.0) if counted else None,
        "passed": passed and counted, "counted": counted, "retry_index": retry,
        "source": "test",
    }
    row.update(extra)
    return row


def write_jsonl(path: Path, rows: list[dict[str, Any]], *, raw_lines: list[str] | None = None
                ) -> Path:
    lines = [json.dumps(r) for r in rows] + (raw_lines or [])
    path.write_text("\n".join(lines) + "\n")
    return path


def small_config(n_tasks: int = 80, seed: int = 3, **kwargs: Any) -> SyntheticConfig:
    models = (SyntheticModel("synthetic-model-a", 8, mean=0.45),
              SyntheticModel("synthetic-model-b", 8, mean=0.6, short_trial_share=0.3),
              SyntheticModel("synthetic-model-c", 2, mean=0.7, fail_turns_factor=1.5))
    return SyntheticConfig(models=kwargs.pop("models", models), n_tasks=n_tasks, seed=seed,
                           **kwargs)


def small_corpus_file(path: Path, **kwargs: Any) -> Path:
    corpus = generate(small_config(**kwargs))
    return write_jsonl(path, corpus.records)


def cli_app() -> typer.Typer:
    """A fresh app with this area's commands registered (as `termgrade` does)."""
    from termgrade.cli import labels, report, select

    app = typer.Typer()
    for module in (labels, report, select):
        module.register(app)
    return app
