"""The layout of a training run directory; no other module joins these paths.

::

    run/
    ├── data/train.parquet, data/validation.parquet   verl's RL prompt tables
    ├── tasks/<task_id>/...                           the tasks, materialized (safe unpack)
    ├── agent_loop.yaml                               verl agent-loop config (our bash loop)
    ├── launch.sh                                     the verl command, every override named
    ├── run.json                                      the record of every choice (RunRecord)
    ├── metrics.jsonl                                 verl's file logger writes here
    ├── checkpoints/                                  verl's trainer.default_local_dir
    └── monitor/metrics.{md,png}                      what ``train monitor`` writes
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def split_file(self, split: str) -> Path:
        return self.data_dir / f"{split}.parquet"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    def task_dir(self, task_id: str) -> Path:
        return self.tasks_dir / task_id

    @property
    def agent_loop_config(self) -> Path:
        return self.root / "agent_loop.yaml"

    @property
    def launch_script(self) -> Path:
        return self.root / "launch.sh"

    @property
    def record(self) -> Path:
        return self.root / "run.json"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def monitor_dir(self) -> Path:
        return self.root / "monitor"
