"""Bandcentral repositories built from fixture tasks, for the training tests."""

from __future__ import annotations

from pathlib import Path

from termgrade.builders.bandcentral import build_bandcentral
from termgrade.records import SplitRow
from tests.support.records import label, write_jsonl
from tests.support.task_dirs import MakeTask

PAPER_MODEL = "google/gemma-4-31B-it"


def labelled_bandcentral(make_task: MakeTask, tmp_path: Path, n_train: int, *,
                         model: str = PAPER_MODEL, scaffold: str = "bash-tool") -> Path:
    """A bandcentral repo of ``n_train`` training tasks and one validation task, selected
    for ``model`` in ``scaffold`` (its labels)."""
    names = [f"t{i:02d}" for i in range(n_train + 1)]
    for name in names:
        make_task(name)
    splits = write_jsonl(tmp_path / "splits.jsonl", [
        SplitRow(task_id=n, split="train" if i < n_train else "heldout", pass_rate=0.5,
                 role="train" if i < n_train else "validation")
        for i, n in enumerate(names)])
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        label(n, model, 0.5).model_copy(update={"scaffold": scaffold}) for n in names])
    out = tmp_path / "bandcentral-labelled"
    build_bandcentral(out, splits=splits, task_roots=[tmp_path / "tasks"], labels=labels)
    return out
