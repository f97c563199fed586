"""Why band-central tasks: GRPO's per-prompt weight and the chance a group carries nothing.

With a binary reward of pass rate ``p``, the reward variance of a prompt's rollouts is
``p(1 - p)``, and GRPO's per-prompt gradient scales with it (Shao et al. 2024, DeepSeekMath;
the reason the TermGrade rule keeps tasks near 0.5). ``4p(1 - p)`` is that weight relative to
its maximum at 0.5. A group of ``G`` rollouts carries no gradient when all are equal, which
happens with probability ``p**G + (1 - p)**G`` (DAPO's dynamic sampling drops such groups).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def reward_variance(p: ArrayLike) -> NDArray[np.float64]:
    """``p(1 - p)``: variance of a Bernoulli(p) reward."""
    arr = _rates(p)
    return arr * (1.0 - arr)


def grpo_weight(p: ArrayLike) -> NDArray[np.float64]:
    """``4p(1 - p)``: per-prompt gradient weight relative to its maximum (1 at p = 0.5)."""
    return 4.0 * reward_variance(p)


def all_equal_probability(p: ArrayLike, rollouts: int) -> NDArray[np.float64]:
    """``p**G + (1 - p)**G``: chance that all ``G`` rollouts pass or all fail."""
    if rollouts < 1:
        raise ValueError(f"rollouts must be >= 1, got {rollouts}")
    arr = _rates(p)
    return np.asarray(arr**rollouts + (1.0 - arr) ** rollouts, dtype="float64")


def expected_all_equal_share(p: ArrayLike, rollouts: int) -> float:
    """Expected share of groups with no gradient, over tasks of true pass rates ``p``."""
    arr = _rates(p)
    if arr.size == 0:
        return float("nan")
    return float(all_equal_probability(arr, rollouts).mean())


def _rates(p: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(p, dtype="float64")
    if np.any((arr < 0) | (arr > 1)):
        raise ValueError("pass rates must lie in [0, 1]")
    return arr
