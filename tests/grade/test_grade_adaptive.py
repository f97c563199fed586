"""Adaptive grading: the band rule, the empirical-Bayes prior, and the scheduler."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from termgrade.core.errors import DataWarning, OptionError
from termgrade.grade.adaptive import (
    DEFAULT_PRIOR,
    AdaptiveRule,
    AdaptiveScheduler,
    Prior,
    fit_prior,
)
from termgrade.selection.bandcentral import SelectionConfig, select_band_central
from termgrade.stats.bands import DEFAULT_SCHEME, BandScheme

# A corpus piled up at 0 and 1, as the release's is: 40% 0/8, 35% 8/8, the rest spread.
POLARISED = [(0, 8)] * 400 + [(8, 8)] * 350 + [(s, 8) for s in range(1, 8)] * 35
# Beta(0.15, 0.15): sharper than the fitted one, for scheduler tests that must stop at k_min.
SHARP = Prior(0.15, 0.15)
FLAT = Prior(1.0, 1.0)


def bimodal_prior() -> Prior:
    prior = fit_prior(POLARISED)
    assert prior.a < 1 and prior.b < 1  # U-shaped: two modes, at 0 and 1
    return prior


# -- the rule ---------------------------------------------------------------------------


def test_zero_of_three_is_decided_under_a_fitted_bimodal_prior() -> None:
    rule, prior = AdaptiveRule(), bimodal_prior()
    assert rule.band_probabilities(0, 3, prior)["low"] >= 0.9
    assert rule.decided(0, 3, prior)
    assert rule.decided(3, 3, prior)
    assert rule.uncertainty(0, 3, prior) == 0.0


def test_two_of_four_is_not_decided() -> None:
    rule, prior = AdaptiveRule(), bimodal_prior()
    assert not rule.decided(2, 4, prior)
    assert rule.uncertainty(2, 4, prior) > rule.uncertainty(1, 1, prior) > 0


def test_default_priors_are_conservative() -> None:
    rule = AdaptiveRule()
    assert fit_prior([]) == DEFAULT_PRIOR == Prior(0.5, 0.5)  # Jeffreys
    assert [n for n in range(9) if rule.decided(0, n)] == [5, 6, 7, 8]
    assert [n for n in range(9) if rule.decided(0, n, FLAT)] == [8]  # 0/7 is not enough


def test_k_min_and_k_max_are_respected() -> None:
    prior = bimodal_prior()
    rule = AdaptiveRule(k_min=4, k_max=6)
    assert not rule.decided(0, 3, prior)  # would be decided, but below k_min
    assert rule.decided(0, 4, prior)
    assert not rule.decided(3, 5, prior)
    assert rule.decided(3, 6, prior) and rule.decided(3, 7, prior)
    assert rule.uncertainty(3, 6, prior) == 0.0


def test_central_tasks_get_the_full_k_unless_refine_is_off() -> None:
    refined, coarse = AdaptiveRule(k_max=40), AdaptiveRule(k_max=40, refine=())
    assert refined.refined == ("central",)
    assert refined.band_probabilities(10, 20)["central"] > 0.9
    assert not refined.decided(10, 20)
    assert coarse.decided(10, 20)


def test_band_probabilities_fold_zero_and_one_into_their_neighbours() -> None:
    probs = AdaptiveRule().band_probabilities(1, 4, Prior(0.3, 0.3))
    assert list(probs) == ["low", "central", "high"]
    assert sum(probs.values()) == pytest.approx(1.0)
    five = AdaptiveRule(scheme=BandScheme.from_cuts([0.2, 0.5, 0.8]))
    assert five.refined == ("band2",)  # 0.5 is a cut; it belongs to [0.2, 0.5]
    assert list(five.band_probabilities(0, 0)) == ["band1", "band2", "band3", "band4"]


@pytest.mark.parametrize("kwargs", [dict(k_min=3, k_max=2), dict(k_min=0), dict(confidence=0.5),
                                    dict(confidence=1.2), dict(refine=("middle",))])
def test_bad_rules_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(OptionError):
        AdaptiveRule(**kwargs)  # type: ignore[arg-type]


def test_bad_counts_are_refused() -> None:
    with pytest.raises(OptionError):
        AdaptiveRule().decided(3, 2)
    with pytest.raises(OptionError):
        fit_prior([(1, 2)] * 30 + [(-1, 2)])


# -- the prior --------------------------------------------------------------------------


def test_fit_prior_recovers_the_beta_it_was_drawn_from() -> None:
    rng = np.random.default_rng(7)
    p = rng.beta(0.3, 0.3 * 0.32 / 0.68, 3000)  # mean 0.68, concentration ~0.44
    prior = fit_prior(zip(rng.binomial(8, p).tolist(), [8] * 3000, strict=True))
    assert prior.mean == pytest.approx(0.68, abs=0.03)
    assert prior.concentration == pytest.approx(0.44, rel=0.2)
    assert prior.fitted_to == 3000


def test_fit_prior_is_unbiased_under_adaptive_stopping() -> None:
    """The likelihood ignores a data-dependent stopping rule, so the fit does too."""
    rng, rule, truth = np.random.default_rng(3), AdaptiveRule(), Prior(0.3, 0.3)
    results = []
    for p in rng.beta(truth.a, truth.b, 3000):
        s = n = 0
        while not rule.decided(s, n, truth):
            s, n = s + int(rng.random() < p), n + 1
        results.append((s, n))
    assert np.mean([n for _, n in results]) < 7  # many tasks stopped early
    prior = fit_prior(results)
    assert prior.a == pytest.approx(0.3, rel=0.2) and prior.b == pytest.approx(0.3, rel=0.2)


def test_fit_prior_falls_back_without_enough_data() -> None:
    assert fit_prior([(1, 2)] * 19) == DEFAULT_PRIOR  # too few tasks with two attempts
    assert fit_prior([(1, 1)] * 500) == DEFAULT_PRIOR  # one attempt says nothing of spread
    assert fit_prior([(0, 4)] * 500) == DEFAULT_PRIOR  # no pass at all: nothing to fit
    assert fit_prior([(1, 2)] * 20) != DEFAULT_PRIOR


# -- the scheduler ----------------------------------------------------------------------


def test_fixed_k_hands_out_exactly_k_per_task() -> None:
    ids = [f"t{i}" for i in range(5)]
    scheduler = AdaptiveScheduler(ids, AdaptiveRule.fixed(3))
    first = scheduler.next_attempts(100)
    assert Counter(first) == {t: 3 for t in ids}
    assert scheduler.next_attempts(100) == []
    for t in first:
        scheduler.record(t, passed=t == "t0")
    assert scheduler.finished()
    summary = scheduler.summary()
    assert (summary.trials_used, summary.trials_fixed, summary.complete) == (15, 15, 5)
    assert summary.saving_factor == 1.0 and summary.saved_fraction == 0.0


def test_breadth_first_below_k_min() -> None:
    ids = [f"t{i}" for i in range(4)]
    scheduler = AdaptiveScheduler(ids, AdaptiveRule(k_min=2))
    assert sorted(scheduler.next_attempts(4)) == ids
    assert sorted(scheduler.next_attempts(4)) == ids


def test_in_flight_attempts_count_against_k_max() -> None:
    ids = ["a", "b"]
    # flat prior: nothing is decided before k_max, so every attempt is needed at once
    scheduler = AdaptiveScheduler(ids, AdaptiveRule(k_max=6), prior=FLAT)
    assert Counter(scheduler.next_attempts(100)) == {"a": 6, "b": 6}
    assert scheduler.next_attempts(100) == []
    # a sharp prior may stop a task at k_min: only k_min attempts are certain to be needed
    scheduler = AdaptiveScheduler(ids, AdaptiveRule(k_max=6), prior=SHARP)
    assert Counter(scheduler.next_attempts(100)) == {"a": 2, "b": 2}
    assert scheduler.next_attempts(100) == []
    for _ in range(2):
        scheduler.record("a", False)
        scheduler.record("b", True)
    assert scheduler.next_attempts(100) == [] and scheduler.finished()
    assert scheduler.summary().stopped_early == 2


def test_a_mixed_task_continues_and_never_exceeds_k_max() -> None:
    scheduler = AdaptiveScheduler(["a"], AdaptiveRule(k_max=5), prior=SHARP)
    handed = 0
    while not scheduler.finished():
        batch = scheduler.next_attempts(10)
        handed += len(batch)
        assert handed <= 5
        for i, t in enumerate(batch):
            scheduler.record(t, passed=(handed + i) % 2 == 0)
    assert scheduler.results() == {"a": (scheduler.results()["a"][0], 5)}


def test_release_makes_the_slot_available_again() -> None:
    scheduler = AdaptiveScheduler(["a"], AdaptiveRule.fixed(2))
    assert scheduler.next_attempts(5) == ["a", "a"]
    assert scheduler.next_attempts(5) == []
    scheduler.release("a")
    assert scheduler.summary().in_flight == 1
    assert scheduler.next_attempts(5) == ["a"]
    scheduler.record("a", True)
    scheduler.record("a", False)
    assert scheduler.finished() and scheduler.results() == {"a": (1, 2)}


def test_results_need_an_attempt_in_flight() -> None:
    scheduler = AdaptiveScheduler(["a"], AdaptiveRule.fixed(2))
    with pytest.raises(OptionError):
        scheduler.record("a", True)
    with pytest.raises(OptionError):
        scheduler.release("a")
    with pytest.raises(OptionError):
        scheduler.record("zz", True)
    with pytest.raises(OptionError):
        AdaptiveScheduler(["a", "a"], AdaptiveRule())


def test_resume_from_done() -> None:
    done = {"a": (0, 8), "b": (3, 5), "c": (2, 2), "elsewhere": (1, 1)}
    scheduler = AdaptiveScheduler(["a", "b", "c"], AdaptiveRule.fixed(8), done=done)
    assert Counter(scheduler.next_attempts(100)) == {"b": 3, "c": 6}
    assert scheduler.summary().trials_used == 15
    adaptive = AdaptiveScheduler(["a", "b", "c"], AdaptiveRule(), done=done, prior=SHARP)
    assert Counter(adaptive.next_attempts(100)) == {"b": 3}  # c (2/2) is decided high
    with pytest.raises(OptionError):
        AdaptiveScheduler(["a"], AdaptiveRule(), done={"a": (3, 2)})


def test_abandoned_tasks_are_not_scheduled() -> None:
    scheduler = AdaptiveScheduler(["a", "b"], AdaptiveRule.fixed(2))
    scheduler.abandon("b")
    assert scheduler.next_attempts(10) == ["a", "a"]
    scheduler.record("a", True)
    scheduler.record("a", True)
    assert scheduler.finished()
    assert scheduler.summary().abandoned == 1


def test_parallel_costs_no_more_than_sequential() -> None:
    """With a fixed prior each task gets exactly the attempts the one-by-one rule gives it,
    whatever the order results come back in and however many run at once."""
    rng, rule = np.random.default_rng(11), AdaptiveRule()
    outcomes = rng.random((200, 8)) < rng.beta(0.3, 0.3, 200)[:, None]
    ids = [f"t{i}" for i in range(200)]
    sequential = []
    for row in outcomes:
        n = 0
        while not rule.decided(int(row[:n].sum()), n, SHARP):
            n += 1
        sequential.append(n)
    used = simulate(outcomes, AdaptiveScheduler(ids, rule, prior=SHARP), rng, slots=50, loss=0.1)
    assert used.tolist() == sequential
    assert min(sequential) == 2 and max(sequential) == 8


# -- a small seeded simulation ----------------------------------------------------------


def simulate(outcomes: np.ndarray, scheduler: AdaptiveScheduler, rng: np.random.Generator,
             slots: int, loss: float = 0.0) -> np.ndarray:
    """A runner: ``slots`` attempts in flight, half of them back per step in random order,
    each lost to infrastructure with chance ``loss``; a task's j-th result is outcomes[j]."""
    ids = list(scheduler.results())
    index = {t: i for i, t in enumerate(ids)}
    used = np.zeros(len(ids), dtype=int)
    flight: list[int] = []
    while True:
        for t in scheduler.next_attempts(slots - len(flight)):
            flight.append(index[t])
            assert used[index[t]] + flight.count(index[t]) <= scheduler.rule.k_max
        if not flight:
            break
        rng.shuffle(flight)
        back, flight = flight[:max(1, len(flight) // 2)], flight[max(1, len(flight) // 2):]
        for i in back:
            if rng.random() < loss:
                scheduler.release(ids[i])
            else:
                scheduler.record(ids[i], bool(outcomes[i, used[i]]))
                used[i] += 1
    assert scheduler.finished()
    return used


def roles(ids: list[str], n_passed: np.ndarray, n_counted: np.ndarray) -> np.ndarray:
    rate = n_passed / n_counted
    frame = pd.DataFrame({"task_id": ids, "model": "m", "scaffold": "s", "pass_rate": rate,
                          "band": DEFAULT_SCHEME.assign(rate), "n_counted": n_counted, "k": 8,
                          "n_passed": n_passed})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        pool = select_band_central(frame, SelectionConfig(model="m", n=45, val_n=18)).pool
    return np.asarray(pool.set_index("task_id")["role"].fillna("none").loc[ids])


def test_adaptive_saves_trials_and_keeps_the_selection() -> None:
    """300 tasks with paper-like rates (mean 0.58, concentration 0.6), five seeds."""
    savings, agreement, flat = [], [], []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        p = rng.beta(0.58 * 0.6, 0.42 * 0.6, 300)
        outcomes = rng.random((300, 8)) < p[:, None]
        ids = [f"t{i:03d}" for i in range(300)]
        scheduler = AdaptiveScheduler(ids, AdaptiveRule())
        used = simulate(outcomes, scheduler, rng, slots=32, loss=0.05)
        passed = np.array([outcomes[i, :n].sum() for i, n in enumerate(used)])
        summary = scheduler.summary()
        assert summary.trials_used == used.sum() and summary.undecided == 0
        assert summary.prior.a < 1 and summary.prior.b < 1
        savings.append(summary.saving_factor)
        fixed = roles(ids, outcomes.sum(1), np.full(300, 8))
        agreement.append(np.mean(roles(ids, passed, used) == fixed))
        no_prior = AdaptiveScheduler(ids, AdaptiveRule(), prior=FLAT)
        flat.append(2400 / simulate(outcomes, no_prior, rng, slots=32).sum())
    assert np.mean(savings) > 1.5
    assert np.mean(agreement) >= 0.85
    assert max(flat) < 1.01  # the fitted prior is what saves: a flat one stops nothing
