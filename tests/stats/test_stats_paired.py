"""Paired comparisons: the t-test is scipy's, the bootstrap interval behaves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from termgrade.stats import bootstrap_mean_ci, paired_compare


def rates(seed: int, n: int = 400, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.beta(0.5, 0.5, n)
    a = np.clip(rng.binomial(8, base) / 8 + shift, 0, 1)
    b = rng.binomial(8, base) / 8
    return a, b


def test_matches_scipy_ttest_rel() -> None:
    a, b = rates(1, shift=0.03)
    result = paired_compare(a, b)
    reference = stats.ttest_rel(a, b)
    assert result.t == pytest.approx(float(reference.statistic))
    assert result.p_value == pytest.approx(float(reference.pvalue))
    assert result.diff_pp == pytest.approx(100 * float((a - b).mean()))
    assert result.n_common == 400


def test_interval_contains_the_estimate_and_is_reproducible() -> None:
    a, b = rates(2)
    first = paired_compare(a, b, seed=7)
    again = paired_compare(a, b, seed=7)
    assert first == again
    assert first.ci_low_pp is not None and first.ci_high_pp is not None
    assert first.ci_low_pp < first.diff_pp < first.ci_high_pp


def test_a_real_difference_is_found_and_a_null_one_is_not() -> None:
    a, b = rates(3, n=1000, shift=0.1)
    strong = paired_compare(a, b)
    assert strong.p_value is not None and strong.p_value < 0.001
    assert strong.ci_low_pp is not None and strong.ci_low_pp > 0
    x, y = rates(4, n=1000)
    null = paired_compare(x, y)
    assert null.p_value is not None and null.p_value > 0.01
    assert null.ci_low_pp is not None and null.ci_high_pp is not None
    assert null.ci_low_pp < 0 < null.ci_high_pp


def test_bootstrap_interval_width_matches_the_standard_error() -> None:
    d = np.random.default_rng(5).normal(0.0, 1.0, 900)
    low, high = bootstrap_mean_ci(d, n_boot=4000, seed=1) or (0.0, 0.0)
    se = d.std(ddof=1) / 30
    assert (high - low) == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_degenerate_inputs() -> None:
    same = paired_compare([0.5, 0.25, 1.0], [0.5, 0.25, 1.0])
    assert same.diff_pp == 0 and same.t is None and same.p_value is None
    assert bootstrap_mean_ci([1.0]) is None
    with pytest.raises(ValueError, match="drop tasks"):
        paired_compare([0.5, float("nan")], [0.5, 0.5])
    with pytest.raises(ValueError, match="same tasks"):
        paired_compare([0.5], [0.5, 0.5])


def test_signed_rank_matches_scipy() -> None:
    from termgrade.stats.signedrank import average_ranks, wilcoxon_signed_rank

    rng = np.random.default_rng(6)
    for d in (rng.normal(0.3, 1, 60), np.round(rng.normal(0, 2, 80)), rng.normal(0, 1, 7)):
        expected = stats.wilcoxon(d, zero_method="wilcox", method="approx", correction=False)
        assert wilcoxon_signed_rank(d) == pytest.approx(float(expected.pvalue))
    assert wilcoxon_signed_rank([0.0, 0.0, 1.0]) is None
    assert average_ranks([3, 1, 3, 2]).tolist() == [3.5, 1.0, 3.5, 2.0]
