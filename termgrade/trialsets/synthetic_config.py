"""Configuration of a synthetic grading corpus: models, tasks, and how trials behave.

Everything synthetic is named so (``synthetic-model-a``, ``synthetic-task-0001``, source
``synthetic``): it can never be mistaken for a real release.
"""

from __future__ import annotations

from dataclasses import dataclass

from termgrade.core.errors import OptionError


@dataclass(frozen=True)
class SyntheticModel:
    """One model configuration and the distributions its trials are drawn from."""

    name: str
    k: int
    """Attempts per task."""
    mean: float = 0.6
    """Mean true pass rate over tasks (the mean of its Beta marginal)."""
    concentration: float = 0.6
    """a + b of the Beta marginal; below 2 the rates pile up near 0 and 1, as in the release."""
    median_win_minutes: float = 20.0
    """Median wall time of a winning trial (log-normal); failing trials take 1.5x."""
    median_win_output_tokens: float = 20_000.0
    """Median output tokens of a winning trial (log-normal); failing trials use 1.3x."""
    infra_error_rate: float = 0.08
    """Chance that one try of an attempt ends in an infrastructure error (then retried)."""
    fail_turns_factor: float = 1.0
    """Failing trials use this many times the turns of winning ones."""
    short_trial_share: float = 0.0
    """Share of trials that end in one or two turns."""

    def __post_init__(self) -> None:
        problems = []
        if self.k < 1:
            problems.append("k must be >= 1")
        if not 0 < self.mean < 1:
            problems.append("mean must be inside (0, 1)")
        if self.concentration <= 0:
            problems.append("concentration must be > 0")
        if not 0 <= self.infra_error_rate < 1 or not 0 <= self.short_trial_share <= 1:
            problems.append("rates must lie in [0, 1)")
        if problems:
            raise OptionError(f"synthetic model {self.name!r}: " + "; ".join(problems))

    @classmethod
    def parse(cls, spec: str) -> SyntheticModel:
        """``NAME:K[:MEAN]``, e.g. ``synthetic-model-x:8:0.55``."""
        parts = spec.split(":")
        try:
            if len(parts) not in (2, 3):
                raise ValueError
            mean = float(parts[2]) if len(parts) == 3 else 0.6
            return cls(name=parts[0], k=int(parts[1]), mean=mean)
        except ValueError:
            raise OptionError(f"--model {spec!r} is not NAME:K[:MEAN]",
                                   fix="e.g. --model synthetic-model-x:8:0.55") from None


PAPER_LIKE: tuple[SyntheticModel, ...] = (
    SyntheticModel("synthetic-model-a", 8, mean=0.50, median_win_minutes=25.0,
                   median_win_output_tokens=12_000),
    SyntheticModel("synthetic-model-b", 8, mean=0.58, median_win_minutes=18.0,
                   median_win_output_tokens=9_000, short_trial_share=0.33),
    SyntheticModel("synthetic-model-c", 8, mean=0.63, median_win_minutes=15.0,
                   median_win_output_tokens=15_000, fail_turns_factor=1.4),
    SyntheticModel("synthetic-model-d", 8, mean=0.68, median_win_minutes=5.6,
                   median_win_output_tokens=5_600),
    SyntheticModel("synthetic-model-e", 2, mean=0.685, median_win_minutes=106.9,
                   median_win_output_tokens=73_000),
    SyntheticModel("synthetic-model-f", 2, mean=0.686, median_win_minutes=92.9,
                   median_win_output_tokens=100_000, fail_turns_factor=1.4),
)
"""Six configurations shaped like the release's: four at k=8, two slow ones at k=2."""


@dataclass(frozen=True)
class SyntheticConfig:
    models: tuple[SyntheticModel, ...] = PAPER_LIKE
    n_tasks: int = 1004
    seed: int = 0
    shared_difficulty: float = 0.6
    """Correlation of the latent difficulty of a task across models (Gaussian copula)."""
    scaffold: str = "terminus-2"
    task_prefix: str = "synthetic-task"
    task_ids: tuple[str, ...] = ()
    """Real task ids to draw trials for (``synth --from-tasks``), one per task, in place
    of ``{task_prefix}-0001``...; the models and the source stay synthetic."""
    mean_tests: float = 16.2
    """Mean named assertions per task (Poisson, at least 3)."""
    near_miss_share: float = 0.45
    """Of failing trials, the share that fail exactly one assertion."""
    max_retries: int = 5
    """Retries of an attempt after infrastructure errors; past this the slot stays uncounted."""
    input_output_ratio: float = 4.6
    """Median input tokens per output token."""

    def __post_init__(self) -> None:
        names = [m.name for m in self.models]
        if not self.models or len(set(names)) != len(names):
            raise OptionError(f"synthetic models must be distinct and non-empty: {names}")
        if self.n_tasks < 1 or not -1 <= self.shared_difficulty <= 1:
            raise OptionError("need n_tasks >= 1 and -1 <= shared_difficulty <= 1")
        if self.task_ids and (len(self.task_ids) != self.n_tasks
                              or len(set(self.task_ids)) != len(self.task_ids)):
            raise OptionError(f"task_ids must be n_tasks ({self.n_tasks}) distinct ids: "
                              f"{len(self.task_ids)} given")

    def task_id(self, index: int) -> str:
        """The id of task ``index`` (from 0): the real one given, else a synthetic name."""
        return self.task_ids[index] if self.task_ids else f"{self.task_prefix}-{index + 1:04d}"
