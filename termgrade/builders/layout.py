"""The on-disk layout of a staged dataset repo; no other module joins these paths.

::

    dist/<repo>/
    ├── README.md                                   # the dataset card (YAML `configs:`)
    ├── data/<config>/<split>-00000-of-00001.parquet  # one folder per config, files roll
    ├── figures/*.png                               # figures the card embeds
    ├── labels.jsonl                                # environments: labels as JSONL
    ├── registry.json                               # environments, bandcentral: Harbor registry
    ├── tasks/<task_id>/...                         # environments, bandcentral: Harbor tasks
    ├── selection/selection.{json,md,png}           # bandcentral: the select run's report
    └── base_image/...                              # environments: the base image recipe

Configs per repo: environments ``tasks`` (default; splits unseen / train151 /
heldout120) and ``labels`` (split ``train``); trajectories ``sft`` (default) and
``episodes`` (split ``train``); bandcentral ``tasks`` (default) and ``verl`` (splits
``train`` / ``validation``). A checkpoint (model) repo holds ``README.md`` and
``training_config.yaml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PARQUET_NAME = re.compile(
    r"^(?P<split>[A-Za-z0-9_.]+)-(?P<index>\d{5})-of-(?P<total>\d{5})\.parquet$")


def parquet_name(split: str, index: int, total: int) -> str:
    return f"{split}-{index:05d}-of-{total:05d}.parquet"


@dataclass(frozen=True)
class RepoPaths:
    root: Path

    @property
    def readme(self) -> Path:
        return self.root / "README.md"

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def config_dir(self, config: str) -> Path:
        return self.data_dir / config

    def split_glob(self, config: str, split: str) -> str:
        """The card's ``data_files`` path pattern of one split (relative to the root)."""
        return f"data/{config}/{split}-*.parquet"

    def parquet_files(self) -> list[Path]:
        return sorted(self.data_dir.rglob("*.parquet")) if self.data_dir.is_dir() else []

    @property
    def figures_dir(self) -> Path:
        return self.root / "figures"

    def figure(self, name: str) -> Path:
        return self.figures_dir / f"{name}.png"

    @property
    def labels_jsonl(self) -> Path:
        return self.root / "labels.jsonl"

    @property
    def registry(self) -> Path:
        return self.root / "registry.json"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    def task_dir(self, task_id: str) -> Path:
        return self.tasks_dir / task_id

    def task_rel(self, task_id: str) -> str:
        """A task's path relative to the root, as registry.json spells it."""
        return f"tasks/{task_id}"

    @property
    def base_image_dir(self) -> Path:
        return self.root / "base_image"

    @property
    def secrets_baseline(self) -> Path:
        """Reviewed detect-secrets findings, kept *beside* the repo (never published,
        never scanned): ``dist/<repo>.secrets.baseline``."""
        return self.root.parent / f"{self.root.name}.secrets.baseline"

    def selection_report(self, kind: str) -> Path:
        """The shipped ``termgrade select`` report: ``kind`` json, md or png."""
        return self.root / "selection" / f"selection.{kind}"

    @property
    def training_config(self) -> Path:
        return self.root / "training_config.yaml"

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()
