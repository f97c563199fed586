"""pass@k: the unbiased estimator of Chen et al. (2021), with standard errors over tasks.

Chen et al., "Evaluating Large Language Models Trained on Code" (arXiv:2107.03374), eq. 1:
for a task attempted ``n`` times with ``c`` passes, ``1 - C(n - c, k) / C(n, k)`` is an
unbiased estimate of the probability that at least one of ``k`` fresh attempts passes.
It is defined only when ``n >= k``; where ``n < k`` this module returns NaN for the task and
leaves it out of benchmark-level means (counting it in ``n_excluded``), never a guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln


def pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> NDArray[np.float64]:
    """Per-task unbiased pass@k; NaN where ``n < k`` (undefined)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n_arr = np.asarray(n, dtype="float64")
    c_arr = np.asarray(c, dtype="float64")
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise ValueError("need 0 <= c <= n for every task")
    fails = n_arr - c_arr
    with np.errstate(invalid="ignore"):
        if k == 1:
            estimate = np.where(n_arr > 0, c_arr / np.where(n_arr > 0, n_arr, 1), np.nan)
        else:
            safe = np.where(fails >= k, fails, k)
            log_ratio = (gammaln(safe + 1) - gammaln(safe - k + 1)
                         - gammaln(n_arr + 1) + gammaln(np.maximum(n_arr - k, 0) + 1))
            estimate = np.where(fails < k, 1.0, 1.0 - np.exp(log_ratio))
    return np.where(n_arr >= k, estimate, np.nan)


@dataclass(frozen=True)
class PassAtK:
    """Benchmark-level pass@k: the mean of per-task estimates over tasks with ``n >= k``."""

    k: int
    value: float | None
    """Mean over defined tasks; None when no task has ``n >= k``."""
    se: float | None
    """Standard error of that mean: sample sd of the per-task estimates / sqrt(tasks)."""
    n_tasks: int
    """Tasks the mean is over."""
    n_excluded: int
    """Tasks left out because ``n < k`` (pass@k undefined for them)."""


def mean_pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> PassAtK:
    per_task = pass_at_k(n, c, k)
    defined = per_task[~np.isnan(per_task)]
    excluded = int(per_task.size - defined.size)
    if defined.size == 0:
        return PassAtK(k, None, None, 0, excluded)
    se = float(np.std(defined, ddof=1) / math.sqrt(defined.size)) if defined.size > 1 else None
    return PassAtK(k, float(defined.mean()), se, int(defined.size), excluded)
