"""Wilcoxon signed-rank test (normal approximation), without importing scipy.stats.

Zeros are dropped (Wilcoxon's convention), tied absolute values share their average rank,
and the variance carries the usual tie correction; no continuity correction. This is
``scipy.stats.wilcoxon(d, zero_method="wilcox", method="approx", correction=False)``,
at a fraction of the import cost (scipy.stats takes about a second to import).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr


def average_ranks(values: ArrayLike) -> np.ndarray:
    """1-based ranks, ties sharing their average rank."""
    x = np.asarray(values, dtype="float64")
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return np.asarray((ends - (counts - 1) / 2.0)[inverse], dtype="float64")


def wilcoxon_signed_rank(differences: ArrayLike) -> float | None:
    """Two-sided p-value that the differences are symmetric about 0; None if < 2 non-zero."""
    d = np.asarray(differences, dtype="float64")
    d = d[d != 0]
    n = d.size
    if n < 2:
        return None
    ranks = average_ranks(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    _, counts = np.unique(np.abs(d), return_counts=True)
    variance = n * (n + 1) * (2 * n + 1) / 24.0 - float((counts**3 - counts).sum()) / 48.0
    if variance <= 0:
        return None
    z = (w_plus - n * (n + 1) / 4.0) / math.sqrt(variance)
    return float(2.0 * ndtr(-abs(z)))
