"""Paired comparison of two models over the tasks both were graded on.

Each task contributes the difference of the two pass rates (task-level pairing, as the
release's comparisons). The p-value is the two-sided paired t-test's (the same as
``scipy.stats.ttest_rel``, computed from ``scipy.special.stdtr`` so that scipy.stats, a
second of import time, is not needed); the confidence interval of the mean difference is a
percentile bootstrap over tasks.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import stdtr


@dataclass(frozen=True)
class PairedComparison:
    n_common: int
    """Tasks with a pass rate under both models."""
    mean_a: float
    mean_b: float
    diff_pp: float
    """mean(a - b) in percentage points."""
    t: float | None
    """Paired t statistic; None when undefined (fewer than 2 tasks, or no variation)."""
    p_value: float | None
    """Two-sided paired t-test p-value; None when undefined."""
    ci_low_pp: float | None
    ci_high_pp: float | None
    ci_level: float
    n_boot: int


@functools.lru_cache(maxsize=2)
def _resample_counts(n: int, n_boot: int, seed: int) -> NDArray[np.float64]:
    """(n_boot, n): how often each of n items is drawn in each bootstrap resample."""
    rng = np.random.default_rng(seed)
    counts = np.empty((n_boot, n))
    for start in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - start)
        draws = rng.integers(0, n, size=(size, n)) + n * np.arange(size)[:, None]
        counts[start:start + size] = np.bincount(draws.ravel(), minlength=size * n).reshape(
            size, n)
    counts.setflags(write=False)
    return counts


_CHUNK = 250
_CACHE_LIMIT = 4_000_000
"""Resample-count matrices up to this many cells are cached and shared between calls."""


def bootstrap_mean_ci(diffs: ArrayLike, *, n_boot: int = 2000, level: float = 0.95,
                      seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean of ``diffs`` (resampling tasks with replacement).

    The resamples depend only on (len(diffs), n_boot, seed), so comparisons over the same
    number of tasks reuse one set of resamples.
    """
    d = np.asarray(diffs, dtype="float64")
    if d.size < 2 or n_boot < 1:
        return None
    if d.size * n_boot <= _CACHE_LIMIT:
        means = _resample_counts(d.size, n_boot, seed) @ d / d.size
    else:
        rng = np.random.default_rng(seed)
        means = np.concatenate([d[rng.integers(0, d.size, size=(min(_CHUNK, n_boot - i),
                                                                d.size))].mean(axis=1)
                                for i in range(0, n_boot, _CHUNK)])
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def paired_compare(a: ArrayLike, b: ArrayLike, *, n_boot: int = 2000, level: float = 0.95,
                   seed: int = 0) -> PairedComparison:
    """Compare per-task pass rates ``a`` and ``b`` (same tasks, same order, no NaN)."""
    x = np.asarray(a, dtype="float64")
    y = np.asarray(b, dtype="float64")
    if x.shape != y.shape:
        raise ValueError("a and b must hold the same tasks")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("drop tasks without a pass rate before pairing")
    d = x - y
    t_stat: float | None = None
    p_value: float | None = None
    if d.size >= 2 and np.ptp(d) > 0:
        t_stat = float(d.mean() / (d.std(ddof=1) / math.sqrt(d.size)))
        p_value = float(2.0 * stdtr(d.size - 1, -abs(t_stat)))
    ci = bootstrap_mean_ci(d, n_boot=n_boot, level=level, seed=seed)
    return PairedComparison(
        n_common=int(d.size),
        mean_a=float(x.mean()) if x.size else math.nan,
        mean_b=float(y.mean()) if y.size else math.nan,
        diff_pp=float(100.0 * d.mean()) if d.size else math.nan,
        t=t_stat, p_value=p_value,
        ci_low_pp=None if ci is None else 100.0 * ci[0],
        ci_high_pp=None if ci is None else 100.0 * ci[1],
        ci_level=level, n_boot=n_boot)
