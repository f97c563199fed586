"""Counts over the trials, accumulated in one pass (memory: one entry per model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from termgrade.builders.card import markdown_table
from termgrade.records.near_miss import is_near_miss


@dataclass
class ModelStats:
    trials: int = 0
    counted: int = 0
    passed: int = 0
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    one_assertion_misses: int = 0
    """Near-misses (:mod:`termgrade.records.near_miss`): counted, failed, exactly one test
    failed while eight or more passed."""


@dataclass
class TrajectoryStats:
    models: dict[tuple[str, str], ModelStats] = field(default_factory=dict)
    input_bytes: int = 0
    from_transcript: set[str] = field(default_factory=set)
    """Tasks without a task dir, whose instruction came from a trial's transcript."""

    def add(self, trial: dict[str, Any]) -> None:
        stats = self.models.setdefault((trial["model"], trial["scaffold"]), ModelStats())
        stats.trials += 1
        stats.counted += bool(trial["counted"])
        stats.passed += bool(trial["passed"])
        stats.turns += trial["turns"] or 0
        stats.input_tokens += trial["input_tokens"] or 0
        stats.output_tokens += trial["output_tokens"] or 0
        stats.one_assertion_misses += is_near_miss(trial)

    @property
    def trials(self) -> int:
        return sum(s.trials for s in self.models.values())

    @property
    def counted(self) -> int:
        return sum(s.counted for s in self.models.values())

    @property
    def passed(self) -> int:
        return sum(s.passed for s in self.models.values())

    @property
    def one_assertion_misses(self) -> int:
        return sum(s.one_assertion_misses for s in self.models.values())

    def near_miss_line(self) -> str:
        """The release's own figure: the share of counted trials that failed exactly one
        assertion while passing eight or more (a reward of 0 all the same)."""
        if not self.counted:
            return "No counted trials: no near-misses to count."
        return (f"{self.one_assertion_misses:,} of {self.counted:,} counted trials "
                f"({self.one_assertion_misses / self.counted:.1%}) failed exactly one "
                "assertion while passing eight or more, and scored 0 like a trial that never "
                "started; `failure_messages` says what each one's failure said.")

    def table(self) -> str:
        rows = []
        for (model, scaffold), s in sorted(self.models.items()):
            rows.append((model, scaffold, s.trials, s.counted, s.passed,
                         s.passed / s.counted if s.counted else None,
                         s.turns / s.trials if s.trials else None,
                         s.input_tokens, s.output_tokens, s.one_assertion_misses,
                         s.one_assertion_misses / s.counted if s.counted else None))
        return self.near_miss_line() + "\n\n" + markdown_table(
            ("model", "scaffold", "trials", "counted", "passed", "pass rate", "mean turns",
             "input tokens", "output tokens", "missed by one assertion",
             "share missed by one"), rows)
