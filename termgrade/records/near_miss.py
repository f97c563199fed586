"""Near-miss: the one definition, used by the report and the trajectories card.

A near-miss is a counted trial that did not pass, in which exactly one test failed (or
errored) while at least ``min_passed`` (default :data:`NEAR_MISS_MIN_PASSED`) tests passed.
A trial whose test counts are unknown (null / NaN) is not a near-miss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

NEAR_MISS_MIN_PASSED = 8
"""Tests a near-miss passes at least, unless the caller says otherwise."""


def near_miss(counted: Any, passed: Any, n_tests_failed: Any, n_tests_passed: Any, *,
              min_passed: int = NEAR_MISS_MIN_PASSED) -> NDArray[np.bool_]:
    """Which trials are near-misses. Takes scalars or equal-length arrays / Series (None and
    NaN for unknown counts); returns a boolean array of their shape."""
    failed = np.asarray(n_tests_failed, dtype=np.float64)
    passing = np.asarray(n_tests_passed, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        mask: NDArray[np.bool_] = (np.asarray(counted, dtype=bool)
                                   & ~np.asarray(passed, dtype=bool)
                                   & (failed == 1) & (passing >= min_passed))
    return mask


def is_near_miss(trial: Any, *, min_passed: int = NEAR_MISS_MIN_PASSED) -> bool:
    """Whether one trial record (a TrialRecord dict, as ``model_dump`` gives) is a near-miss."""
    return bool(near_miss(trial["counted"], trial["passed"], trial["n_tests_failed"],
                          trial["n_tests_passed"], min_passed=min_passed))
