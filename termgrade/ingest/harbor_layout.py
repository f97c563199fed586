"""Where things are in a Harbor job directory, for every Harbor layout we read.

A job directory (``harbor run -o JOBS --job-name NAME`` writes ``JOBS/NAME``)::

    NAME/
    ├── config.json              job config (agents, datasets, n_attempts, retry)
    ├── result.json              job stats (written last; absent while running)
    ├── job.log
    └── <task>__<random7>/       one trial; the suffix is random, not an attempt index
        ├── config.json          trial config (agent name, model, task path)
        ├── result.json          TrialResult, written when the trial ends
        ├── exception.txt        traceback, when the trial raised
        ├── trial.log
        ├── agent/               what the agent wrote under /logs/agent
        │   ├── trajectory.json            ATIF v1.x (LLM agents, Harbor >= 0.1)
        │   ├── trajectory.cont-N.json     continuation after context summarization
        │   └── episode-N/                 Harbor < 0.9: prompt.txt, response.txt, debug.json
        ├── verifier/            reward.txt | reward.json, ctrf.json, junit.xml,
        │                        test-stdout.txt, test-stderr.txt
        └── steps/<step>/        Harbor >= 0.5 multi-step trials: agent/ and verifier/ per step

Two layouts differ in ``result.json``: Harbor 0.1-0.4 writes no ``step_results`` key
(:attr:`Layout.LEGACY`); Harbor >= 0.5 always writes it, and >= 0.26 adds
``schema_version`` and ``reward_valid`` (:attr:`Layout.CURRENT`). Readers do not branch
on the layout beyond that: each file is read if present.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

_EPISODE_DIR = re.compile(r"^episode-(\d+)$")
_CONTINUATION = re.compile(r"^trajectory\.cont-(\d+)\.json$")


class Layout(StrEnum):
    LEGACY = "harbor-0.1"
    """Harbor 0.1-0.4: no ``step_results``; Terminus-2 also writes agent/episode-N/."""
    CURRENT = "harbor-0.9"
    """Harbor >= 0.5 (episode files gone from 0.9): ``step_results``, ATIF only."""


def detect_layout(result: dict[str, Any]) -> Layout:
    """The layout a parsed trial ``result.json`` was written in."""
    if "step_results" in result or "schema_version" in result:
        return Layout.CURRENT
    return Layout.LEGACY


@dataclass(frozen=True)
class AgentPaths:
    """An agent log directory: ``agent/`` or ``steps/<step>/agent/``."""

    root: Path

    @property
    def trajectory(self) -> Path:
        return self.root / "trajectory.json"

    def trajectory_files(self) -> list[Path]:
        """trajectory.json, then its continuations in order; empty if none."""
        if not self.trajectory.is_file():
            return []
        conts = [(int(m.group(1)), p) for p in self.root.glob("trajectory.cont-*.json")
                 if (m := _CONTINUATION.match(p.name))]
        return [self.trajectory, *(p for _, p in sorted(conts))]

    def episode_dirs(self) -> list[Path]:
        """agent/episode-N/ directories sorted by N (Harbor < 0.9)."""
        if not self.root.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.root.iterdir()
                 if p.is_dir() and (m := _EPISODE_DIR.match(p.name))]
        return [p for _, p in sorted(found)]


@dataclass(frozen=True)
class TrialPaths:
    """One trial directory of a Harbor job."""

    root: Path

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def result(self) -> Path:
        return self.root / "result.json"

    @property
    def exception(self) -> Path:
        return self.root / "exception.txt"

    @property
    def agent(self) -> AgentPaths:
        return AgentPaths(self.root / "agent")

    @property
    def verifier(self) -> Path:
        return self.root / "verifier"

    def step(self, step_name: str) -> Path:
        return self.root / "steps" / step_name

    def step_agent(self, step_name: str) -> AgentPaths:
        return AgentPaths(self.step(step_name) / "agent")

    def step_verifier(self, step_name: str) -> Path:
        return self.step(step_name) / "verifier"


def is_trial_dir(path: Path) -> bool:
    """A trial directory: a config or result file beside agent/, verifier/ or trial.log."""
    if not path.is_dir():
        return False
    has_record = (path / "config.json").is_file() or (path / "result.json").is_file()
    has_trial_part = any((path / part).exists()
                         for part in ("agent", "verifier", "trial.log", "steps"))
    return has_record and has_trial_part


def find_trial_dirs(path: Path) -> list[Path]:
    """Trial directories at ``path``: itself, its children (a job), or grandchildren (jobs)."""
    if is_trial_dir(path):
        return [path]
    if not path.is_dir():
        return []
    children = sorted(p for p in path.iterdir() if p.is_dir())
    trials = [p for p in children if is_trial_dir(p)]
    if trials:
        return trials
    return [g for child in children for g in sorted(child.iterdir()) if is_trial_dir(g)]


def read_json(path: Path) -> Any:
    """Parsed JSON (NaN allowed, as Python writes it). OSError / ValueError on failure."""
    return json.loads(path.read_text(encoding="utf-8"))
