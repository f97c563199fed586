"""Trial-level sections: cost, near-misses, and turns of winning vs failing trials."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from termgrade.passrates.models import (
    CostRow,
    CostTotals,
    NearMisses,
    NearMissExample,
    NearMissRow,
    TurnsRow,
)
from termgrade.passrates.summary import config_names
from termgrade.records.near_miss import NEAR_MISS_MIN_PASSED, near_miss
from termgrade.stats.signedrank import wilcoxon_signed_rank


def _num(value: float) -> float | None:
    return None if math.isnan(value) else value


def _ratio(top: float, bottom: float) -> float | None:
    return float(top / bottom) if bottom else None


def _span(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None and v > 0]
    return max(present) / min(present) if len(present) >= 2 else None


def with_config(trials: pd.DataFrame) -> pd.DataFrame:
    out = trials.copy()
    out["config"] = config_names(trials)
    return out


def cost_rows(trials: pd.DataFrame) -> list[CostRow]:
    rows = []
    for config, t in with_config(trials).groupby("config", sort=True):
        counted = t[t["counted"]]
        wins = counted[counted["passed"]]
        hours_all = float(t["duration_s"].sum()) / 3600
        hours = float(counted["duration_s"].sum()) / 3600
        rows.append(CostRow(
            config=str(config), n_trials=len(t), n_counted=len(counted), n_wins=len(wins),
            median_win_minutes=_num(float(wins["duration_s"].median()) / 60),
            median_win_output_tokens=_num(float(wins["output_tokens"].median())),
            output_tokens_per_win=_ratio(float(counted["output_tokens"].sum()), len(wins)),
            trial_hours=hours, trial_hours_all=hours_all,
            retry_share=_ratio(hours_all - hours, hours_all),
            input_tokens=float(t["input_tokens"].sum()),
            output_tokens=float(t["output_tokens"].sum()),
            input_output_ratio=_ratio(float(t["input_tokens"].sum()),
                                      float(t["output_tokens"].sum()))))
    return rows


def cost_totals(rows: list[CostRow], pass1: Mapping[str, float | None]) -> CostTotals:
    input_tokens = sum(r.input_tokens for r in rows)
    output_tokens = sum(r.output_tokens for r in rows)
    return CostTotals(
        input_tokens=input_tokens, output_tokens=output_tokens,
        trial_hours=sum(r.trial_hours for r in rows),
        trial_hours_all=sum(r.trial_hours_all for r in rows),
        input_output_ratio=_ratio(input_tokens, output_tokens),
        pass1_span=_span([pass1.get(r.config) for r in rows]),
        hours_span=_span([r.trial_hours for r in rows]),
        tokens_per_win_span=_span([r.median_win_output_tokens for r in rows]))


def near_misses(trials: pd.DataFrame, *, min_passed: int = NEAR_MISS_MIN_PASSED,
                top: int = 10) -> NearMisses:
    """Near-misses (:mod:`termgrade.records.near_miss`): counted, failed trials that failed
    exactly one assertion while passing >= min_passed."""
    frame = with_config(trials)
    counted = frame[frame["counted"]]
    near = counted[near_miss(counted["counted"], counted["passed"], counted["n_tests_failed"],
                             counted["n_tests_passed"], min_passed=min_passed)]
    if "failed_message" not in near.columns:  # a frame from before messages were recorded
        near = near.assign(failed_message=None)
    rows = []
    for config, group in counted.groupby("config", sort=True):
        hits = near[near["config"] == config]
        example = None
        if len(hits):
            first = hits.sort_values(["n_tests_passed", "trial_id"], ascending=[False, True])
            r = first.iloc[0]
            example = NearMissExample(task_id=str(r["task_id"]), trial_id=str(r["trial_id"]),
                                      failed_test=None if pd.isna(r["failed_test"])
                                      else str(r["failed_test"]),
                                      n_tests_passed=int(r["n_tests_passed"]),
                                      failed_message=None if pd.isna(r["failed_message"])
                                      else str(r["failed_message"]))
        rows.append(NearMissRow(config=str(config), n_counted=len(group), n_near_miss=len(hits),
                                share=_ratio(len(hits), len(group)), example=example))
    named = near["failed_test"].dropna().value_counts().head(top)
    said = near.dropna(subset=["failed_test", "failed_message"])
    messages = [(str(name), str(said[said["failed_test"] == name]["failed_message"]
                                .value_counts().index[0]))
                for name in named.index if (said["failed_test"] == name).any()]
    failing = counted[~counted["passed"]]["n_tests_failed"].dropna().clip(upper=10)
    counts = failing.astype("int64").value_counts().sort_index()
    return NearMisses(min_passed=min_passed, total=len(near), n_counted=len(counted),
                      share=_ratio(len(near), len(counted)), rows=rows,
                      top_failed_tests=[(str(n), int(c)) for n, c in named.items()],
                      top_failed_messages=messages,
                      failing_counts=[(int(k), int(v)) for k, v in counts.items()])


def _within_task(t: pd.DataFrame) -> NDArray[np.float64]:
    """Per task with wins and failures: mean turns of wins - mean turns of failures."""
    means = t.groupby(["task_id", "passed"])["turns"].mean().unstack("passed")
    if True not in means.columns or False not in means.columns:
        return np.array([], dtype=np.float64)
    return np.asarray((means[True] - means[False]).dropna().to_numpy(), dtype=np.float64)


def turn_rows(trials: pd.DataFrame) -> list[TurnsRow]:
    frame = with_config(trials)
    frame = frame[frame["counted"] & frame["turns"].notna()]
    rows = []
    for config, t in frame.groupby("config", sort=True):
        diffs = _within_task(t)
        p_value = wilcoxon_signed_rank(diffs)
        rows.append(TurnsRow(
            config=str(config), n_trials=len(t),
            median_turns_win=_num(float(t.loc[t["passed"], "turns"].median())),
            median_turns_fail=_num(float(t.loc[~t["passed"], "turns"].median())),
            share_two_or_fewer=_ratio(int((t["turns"] <= 2).sum()), len(t)),
            n_tasks_mixed=int(diffs.size),
            mean_diff_within_task=float(diffs.mean()) if diffs.size else None,
            median_diff_within_task=float(np.median(diffs)) if diffs.size else None,
            share_tasks_wins_fewer=float((diffs < 0).mean()) if diffs.size else None,
            wilcoxon_p=p_value))
    return rows
