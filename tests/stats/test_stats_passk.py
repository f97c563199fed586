"""pass@k (Chen et al. 2021): exact unbiasedness, edge cases, and the reference formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from termgrade.stats import mean_pass_at_k, pass_at_k


def reference(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 60), data=st.data())
def test_matches_the_combinatorial_formula(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(1, n))
    c = data.draw(st.integers(0, n))
    assert pass_at_k([n], [c], k)[0] == pytest.approx(reference(n, c, k), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 24), p=st.floats(0, 1), data=st.data())
def test_unbiased_exactly_over_the_binomial(n: int, p: float, data: st.DataObject) -> None:
    """E[estimate] over c ~ Binomial(n, p) equals 1 - (1 - p)^k, the true pass@k."""
    k = data.draw(st.integers(1, n))
    c = np.arange(n + 1)
    pmf = np.array([math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in c])
    expected = float(np.sum(pmf * pass_at_k(np.full(n + 1, n), c, k)))
    assert expected == pytest.approx(1 - (1 - p) ** k, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 40), data=st.data())
def test_all_attempts_pass_gives_one(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(1, n))
    assert pass_at_k([n], [n], k)[0] == 1.0


@settings(max_examples=100, deadline=None)
@given(c=st.lists(st.integers(0, 8), min_size=1, max_size=50))
def test_pass_at_8_is_at_least_pass_at_1(c: list[int]) -> None:
    n = np.full(len(c), 8)
    assert np.all(pass_at_k(n, c, 8) >= pass_at_k(n, c, 1) - 1e-12)
    assert mean_pass_at_k(n, c, 8).value >= mean_pass_at_k(n, c, 1).value - 1e-12  # type: ignore[operator]


def test_undefined_when_fewer_attempts_than_k() -> None:
    values = pass_at_k([2, 8, 0], [1, 1, 0], 8)
    assert math.isnan(values[0]) and not math.isnan(values[1]) and math.isnan(values[2])
    summary = mean_pass_at_k([2, 8, 8], [1, 0, 8], 8)
    assert summary.n_tasks == 2 and summary.n_excluded == 1
    assert summary.value == pytest.approx(0.5)
    none = mean_pass_at_k([2, 2], [1, 2], 8)
    assert none.value is None and none.n_excluded == 2


def test_pass_at_1_is_the_pass_rate_with_its_standard_error() -> None:
    n = np.array([8, 8, 8, 4])
    c = np.array([0, 4, 8, 1])
    summary = mean_pass_at_k(n, c, 1)
    rates = c / n
    assert summary.value == pytest.approx(rates.mean())
    assert summary.se == pytest.approx(rates.std(ddof=1) / 2)


def test_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k([4], [5], 1)
    with pytest.raises(ValueError, match="k must be"):
        pass_at_k([4], [1], 0)
