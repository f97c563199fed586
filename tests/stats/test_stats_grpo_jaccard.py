"""GRPO weights, all-equal groups, and Jaccard overlap of band-central sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from termgrade.stats import (
    all_equal_probability,
    expected_all_equal_share,
    grpo_weight,
    jaccard,
    jaccard_matrix,
    reward_variance,
)


@settings(max_examples=100, deadline=None)
@given(p=st.floats(0, 1), g=st.integers(1, 64))
def test_weight_and_all_equal_agree_with_their_definitions(p: float, g: int) -> None:
    assert float(grpo_weight(p)) == pytest.approx(4 * p * (1 - p))
    assert float(reward_variance(p)) == pytest.approx(p * (1 - p))
    assert float(all_equal_probability(p, g)) == pytest.approx(p**g + (1 - p) ** g)
    assert float(grpo_weight(p)) == pytest.approx(float(grpo_weight(1 - p)))


def test_all_equal_share_simulates_right() -> None:
    rates = np.array([0.25, 0.5, 0.75, 0.375])
    rng = np.random.default_rng(0)
    draws = rng.random((200_000, rates.size, 4)) < rates[None, :, None]
    observed = (draws.all(axis=2) | (~draws).all(axis=2)).mean()
    assert expected_all_equal_share(rates, 4) == pytest.approx(observed, abs=0.003)


def test_rates_outside_0_1_are_refused() -> None:
    with pytest.raises(ValueError):
        grpo_weight(1.5)
    with pytest.raises(ValueError):
        all_equal_probability(0.5, 0)


def test_jaccard_basics() -> None:
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) is None
    assert jaccard({"a"}, set()) == 0


def test_matrix_is_symmetric_and_names_the_common_tasks() -> None:
    sets = {"m1": {"a", "b", "c"}, "m2": {"b", "c", "d"}, "m3": {"c", "x"}}
    result = jaccard_matrix(sets)
    m = np.array(result.matrix, dtype=float)
    assert np.allclose(m, m.T)
    assert np.allclose(np.diag(m), 1)
    assert m[0, 1] == pytest.approx(2 / 4)
    assert m[0, 2] == pytest.approx(1 / 4)
    assert result.in_all == ["c"]
    assert result.sizes == [3, 3, 2]
    assert result.max_pair == ("m1", "m2")
    assert result.off_diagonal_min == pytest.approx(0.25)
