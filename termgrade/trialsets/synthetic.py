"""A seeded generator of synthetic grading corpora with a known truth.

Each task has one true pass rate per model: Beta-distributed per model (mean and
concentration from :class:`SyntheticModel`), with the task's difficulty partly shared
across models through a Gaussian copula (``shared_difficulty`` is the correlation of the
latent). Every attempt draws a pass from that rate. Tries can end in infrastructure errors
(``counted = false``, reward null) and are retried with ``retry_of`` lineage. Durations and
tokens are log-normal; failing trials list their failed assertions, a share of them fail
exactly one (near-misses). Same config, same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.special import betaincinv, ndtr

from termgrade.trialsets.synthetic_config import SyntheticConfig, SyntheticModel

SOURCE = "synthetic"
_STEMS = (
    "empty_input", "output_format", "exit_code", "large_input", "unicode_names", "permissions",
    "idempotent_rerun", "missing_file", "config_parsed", "log_rotation", "service_starts",
    "port_listening", "json_schema", "csv_header", "sorted_output", "dedupe", "timezone",
    "trailing_newline", "symlinks", "hidden_files", "error_message", "help_flag",
    "version_flag", "stdin_mode", "concurrency", "locking", "cleanup", "temp_files",
    "checksum", "compression", "round_trip", "negative_numbers", "overflow", "precision",
    "rounding", "whitespace", "comments_ignored", "env_override", "default_path",
    "relative_path", "absolute_path", "no_network", "retry_logic", "timeout", "signals",
    "exit_on_error", "report_written", "summary_line",
)


@dataclass
class SyntheticCorpus:
    records: list[dict[str, Any]]
    """TrialRecord-shaped dicts, ordered by model, task, attempt, try."""
    truth: pd.DataFrame
    """task_id, model, scaffold, k, true_pass_rate."""


def _true_rates(config: SyntheticConfig, rng: np.random.Generator) -> NDArray[np.float64]:
    """(models, tasks) true pass rates."""
    rho = config.shared_difficulty
    shared = rng.standard_normal(config.n_tasks)
    rates = np.empty((len(config.models), config.n_tasks))
    for i, model in enumerate(config.models):
        own = rng.standard_normal(config.n_tasks)
        u = ndtr(rho * shared + np.sqrt(1 - rho**2) * own)
        a = model.mean * model.concentration
        b = (1 - model.mean) * model.concentration
        rates[i] = betaincinv(a, b, u)  # the Beta(a, b) quantile of u
    return np.clip(rates, 0.0, 1.0)


def _task_tests(config: SyntheticConfig, rng: np.random.Generator) -> list[list[str]]:
    counts = np.clip(rng.poisson(config.mean_tests, config.n_tasks), 3, len(_STEMS))
    return [[f"test_{s}" for s in rng.choice(_STEMS, size=n, replace=False)] for n in counts]


def _lognormal(rng: np.random.Generator, median: NDArray[np.float64] | float, sigma: float,
               size: int) -> NDArray[np.float64]:
    return np.asarray(median * np.exp(sigma * rng.standard_normal(size)), dtype="float64")


def _failed_masks(rng: np.random.Generator, n_tests: NDArray[np.int64], near: NDArray[np.bool_],
                  width: int) -> NDArray[np.bool_]:
    """(trials, width) mask of failed tests for failing trials; near-misses fail exactly one,
    most often the task's first (hardest) test."""
    size = n_tests.size
    n_fail = np.where(near, 1, 1 + rng.binomial(np.maximum(n_tests - 1, 0), 0.35))
    keys = rng.random((size, width))
    keys[:, 0] *= np.where(near, 0.3, 1.0)  # the hardest test fails more often
    keys[np.arange(width)[None, :] >= n_tests[:, None]] = np.inf
    ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
    return np.asarray(ranks < n_fail[:, None])


def _model_trials(config: SyntheticConfig, model: SyntheticModel, rates: NDArray[np.float64],
                  tests: list[list[str]], rng: np.random.Generator) -> list[dict[str, Any]]:
    t_count, k = config.n_tasks, model.k
    task = np.repeat(np.arange(t_count), k)
    attempt = np.tile(np.arange(k), t_count)
    slots = task.size
    infra = rng.geometric(1 - model.infra_error_rate, slots) - 1 if model.infra_error_rate else \
        np.zeros(slots, dtype=np.int64)
    lost = infra > config.max_retries
    infra = np.minimum(infra, config.max_retries + 1)
    passed = rng.random(slots) < rates[task]
    n_tests = np.array([len(tests[t]) for t in task], dtype=np.int64)
    near = rng.random(slots) < config.near_miss_share
    failed = _failed_masks(rng, n_tests, near, len(max(tests, key=len)))
    win_s = model.median_win_minutes * 60
    duration = _lognormal(rng, np.where(passed, win_s, 1.5 * win_s), 0.7, slots)
    out_tok = _lognormal(rng, np.where(passed, 1.0, 1.3) * model.median_win_output_tokens, 0.9,
                         slots)
    in_tok = out_tok * _lognormal(rng, config.input_output_ratio, 0.35, slots)
    turns = np.maximum(1, np.round(_lognormal(
        rng, np.where(passed, 12.0, 12.0 * model.fail_turns_factor), 0.5, slots)))
    short = rng.random(slots) < model.short_trial_share
    turns = np.where(short, rng.integers(1, 3, slots), turns)
    infra_s = _lognormal(rng, 1.5 * win_s, 0.5, int(infra.sum()) + 1)
    records: list[dict[str, Any]] = []
    used = 0
    for s in range(slots):
        task_id = config.task_id(int(task[s]))
        base = {"task_id": task_id, "model": model.name, "scaffold": config.scaffold,
                "attempt": int(attempt[s]), "source": SOURCE, "schema_version": "1.0"}
        previous: str | None = None
        for retry in range(int(infra[s]) + (0 if lost[s] else 1)):
            trial_id = f"{task_id}__{model.name}__a{attempt[s]}__r{retry}"
            row: dict[str, Any] = {**base, "trial_id": trial_id, "retry_index": retry}
            if previous is not None:
                row["retry_of"] = previous
            if retry < infra[s]:
                row.update(reward=None, passed=False, counted=False,
                           duration_s=round(float(infra_s[used]), 1),
                           exception_type="SyntheticInfraError",
                           exception_message="synthetic infrastructure error: trial timed out "
                                             "on the client side")
                used += 1
            else:
                row.update(_graded(bool(passed[s]), tests[task[s]], failed[s]),
                           duration_s=round(float(duration[s]), 1), turns=int(turns[s]),
                           output_tokens=int(out_tok[s]), input_tokens=int(in_tok[s]))
            records.append(row)
            previous = trial_id
    return records


def _graded(passed: bool, names: list[str], failed: NDArray[np.bool_]) -> dict[str, Any]:
    outcomes = ["passed" if passed or not failed[j] else "failed" for j in range(len(names))]
    n_failed = outcomes.count("failed")
    return {"reward": 1.0 if passed else 0.0, "passed": passed, "counted": True,
            "tests": [{"name": n, "outcome": o} for n, o in zip(names, outcomes, strict=True)],
            "n_tests_passed": len(names) - n_failed, "n_tests_failed": n_failed}


def generate(config: SyntheticConfig | None = None) -> SyntheticCorpus:
    """The corpus of ``config`` (default: six paper-like models on 1,004 tasks, seed 0)."""
    config = config or SyntheticConfig()
    rng = np.random.default_rng(config.seed)
    rates = _true_rates(config, rng)
    tests = _task_tests(config, rng)
    records: list[dict[str, Any]] = []
    for i, model in enumerate(config.models):
        records += _model_trials(config, model, rates[i], tests, rng)
    truth = pd.DataFrame({
        "task_id": [config.task_id(t) for t in range(config.n_tasks)] *
        len(config.models),
        "model": np.repeat([m.name for m in config.models], config.n_tasks),
        "scaffold": config.scaffold,
        "k": np.repeat([m.k for m in config.models], config.n_tasks),
        "true_pass_rate": rates.reshape(-1),
    })
    return SyntheticCorpus(records=records, truth=truth)
