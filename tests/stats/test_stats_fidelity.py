"""The paper's analytic numbers, recomputed with the project's own functions."""

from __future__ import annotations

import numpy as np
import pytest

from termgrade.stats import all_equal_probability, grpo_weight, mean_pass_at_k
from termgrade.trialsets.synthetic import generate


def test_weight_is_at_least_84_percent_anywhere_in_0_3_to_0_7() -> None:
    p = np.linspace(0.3, 0.7, 4001)
    assert grpo_weight(p).min() >= 0.84 - 1e-12
    assert round(float(grpo_weight(0.3)), 2) == 0.84  # the bound is tight at the ends


def test_weight_is_99_percent_at_0_45_and_92_percent_at_0_36() -> None:
    assert round(float(grpo_weight(0.45)), 2) == 0.99
    assert round(float(grpo_weight(0.36)), 2) == 0.92
    assert float(grpo_weight(0.5)) == 1.0
    assert float(grpo_weight(0.0)) == float(grpo_weight(1.0)) == 0.0


def test_sixteen_rollouts_at_one_half_are_all_equal_about_3_in_100000() -> None:
    probability = float(all_equal_probability(0.5, 16))
    assert probability == pytest.approx(3.05e-5, rel=0.01)
    assert round(probability * 100_000) == 3


@pytest.mark.slow
def test_pass_at_8_is_at_least_pass_at_1_for_every_k8_model_of_a_release_sized_corpus() -> None:
    corpus = generate()
    frame = __import__("pandas").DataFrame(corpus.records)
    counted = frame[frame["counted"]]
    per_task = counted.groupby(["model", "task_id"])["passed"].agg(["size", "sum"])
    for model, rows in per_task.groupby(level="model"):
        n, c = rows["size"].to_numpy(), rows["sum"].to_numpy()
        if n.max() >= 8:
            p1, p8 = mean_pass_at_k(n, c, 1).value, mean_pass_at_k(n, c, 8).value
            assert p1 is not None and p8 is not None and p8 >= p1, model
