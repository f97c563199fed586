"""The grading report as typed records: what ``report.json`` holds, field by field."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.version import RecordFormat

REPORT_SCHEMA_VERSION = "1.0"
REPORT_FORMAT = RecordFormat(schema="report", version=REPORT_SCHEMA_VERSION,
                             writer="termgrade report")


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PassAtKOut(_Out):
    k: int
    value: float | None = Field(description="Mean unbiased pass@k over tasks with n >= k.")
    se: float | None = Field(description="Standard error over tasks.")
    n_tasks: int = Field(description="Tasks in the mean.")
    n_excluded: int = Field(description="Tasks left out because n_counted < k.")


class ConfigSummary(_Out):
    config: str = Field(description="Display name: the model, plus the scaffold if several.")
    model: str
    scaffold: str
    k: int = Field(description="Planned attempts per task (largest k among its tasks).")
    n_tasks: int = Field(description="Tasks with a label row.")
    n_measured: int = Field(description="Tasks with at least one counted trial.")
    n_counted_trials: int
    pass_at_1: PassAtKOut
    pass_at_k: PassAtKOut = Field(description="pass@k at the configuration's own k.")
    pass_at_8: PassAtKOut | None = Field(description="pass@8, only where k >= 8.")
    bands: dict[str, int] = Field(description="Tasks per difficulty band.")
    pass_at_1_by_attestation: dict[str, PassAtKOut] = Field(
        default_factory=dict, description="pass@1 of the attested tasks (the grader's "
        "signed record), the unattested ones (test.sh's own reward) and those with no "
        "record of it, apart: a vouched number is never mixed unnoticed with an unvouched "
        "one. Only the kinds present.")


class PairedRow(_Out):
    a: str
    b: str
    n_common: int = Field(description="Tasks measured under both.")
    mean_a: float
    mean_b: float
    diff_pp: float = Field(description="mean pass rate of a minus b, percentage points.")
    t: float | None
    p_value: float | None = Field(description="Paired t-test, two-sided; null if undefined.")
    ci_low_pp: float | None = Field(description="Bootstrap CI of diff_pp (tasks resampled).")
    ci_high_pp: float | None
    ci_level: float
    n_boot: int


class JaccardOut(_Out):
    band: str = Field(description="The band whose task sets are compared.")
    names: list[str]
    matrix: list[list[float | None]]
    sizes: list[int] = Field(description="Tasks in each configuration's set.")
    in_all: list[str] = Field(description="Tasks in the band for every configuration.")
    off_diagonal_min: float | None
    off_diagonal_max: float | None
    max_pair: list[str] | None


class CostRow(_Out):
    config: str
    n_trials: int = Field(description="All trials, retries and infrastructure errors included.")
    n_counted: int
    n_wins: int
    median_win_minutes: float | None = Field(description="Median duration of a winning trial.")
    median_win_output_tokens: float | None = Field(
        description="Median output tokens of a winning trial.")
    output_tokens_per_win: float | None = Field(
        description="Output tokens of all counted trials / wins.")
    trial_hours: float = Field(description="Summed duration of counted trials, hours.")
    trial_hours_all: float = Field(description="Summed duration of all trials, hours.")
    retry_share: float | None = Field(description="Share of all hours spent on uncounted tries.")
    input_tokens: float
    output_tokens: float
    input_output_ratio: float | None


class CostTotals(_Out):
    input_tokens: float
    output_tokens: float
    trial_hours: float
    trial_hours_all: float
    input_output_ratio: float | None
    pass1_span: float | None = Field(description="Largest / smallest pass@1 over configurations.")
    hours_span: float | None = Field(description="Largest / smallest trial_hours.")
    tokens_per_win_span: float | None = Field(
        description="Largest / smallest median output tokens per win.")


class NearMissExample(_Out):
    task_id: str
    trial_id: str
    failed_test: str | None
    failed_message: str | None = None
    n_tests_passed: int


class NearMissRow(_Out):
    config: str
    n_counted: int
    n_near_miss: int
    share: float | None
    example: NearMissExample | None


class NearMisses(_Out):
    min_passed: int = Field(description="A near-miss fails one assertion, passes at least this.")
    total: int
    n_counted: int
    share: float | None
    rows: list[NearMissRow]
    top_failed_tests: list[tuple[str, int]]
    top_failed_messages: list[tuple[str, str]] = Field(
        default_factory=list, description="Per test of top_failed_tests with a recorded "
        "message: its commonest 'name: message' among the near-misses.")
    failing_counts: list[tuple[int, int]] = Field(
        default_factory=list, description="Counted failed trials by how many tests each "
        "failed: (tests failed, trials), tests failed capped at 10 (10 means 10 or more).")


class TurnsRow(_Out):
    config: str
    n_trials: int = Field(description="Counted trials with a turn count.")
    median_turns_win: float | None
    median_turns_fail: float | None
    share_two_or_fewer: float | None = Field(description="Share of trials ending in <= 2 turns.")
    n_tasks_mixed: int = Field(description="Tasks with both winning and failing trials.")
    mean_diff_within_task: float | None = Field(
        description="Mean over those tasks of (mean turns of wins - mean turns of failures).")
    median_diff_within_task: float | None
    share_tasks_wins_fewer: float | None
    wilcoxon_p: float | None = Field(description="Wilcoxon signed-rank test of the differences.")


class PassRateReport(_Out):
    schema_version: Annotated[str, REPORT_FORMAT] = REPORT_SCHEMA_VERSION
    inputs: list[str]
    band_scheme: list[str]
    central_band: str
    configs: list[ConfigSummary]
    paired: list[PairedRow]
    jaccard: JaccardOut
    cost: list[CostRow] | None = None
    cost_totals: CostTotals | None = None
    near_misses: NearMisses | None = None
    turns: list[TurnsRow] | None = None
    issues: list[str] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)
