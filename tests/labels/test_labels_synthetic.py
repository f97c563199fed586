"""The synthetic corpus generator: deterministic, all synthetic, valid, truthful."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from termgrade.core.errors import DataWarning, OptionError
from termgrade.labels import compute_labels
from termgrade.records import TrialRecord
from termgrade.trialsets import read_trials
from termgrade.trialsets.synthetic import generate
from termgrade.trialsets.synthetic_config import SyntheticModel
from tests.support.labels import small_config, write_jsonl


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    first, again = generate(small_config(n_tasks=30)), generate(small_config(n_tasks=30))
    assert first.records == again.records
    pd.testing.assert_frame_equal(first.truth, again.truth)
    other = generate(small_config(n_tasks=30, seed=99))
    assert other.records != first.records


def test_records_are_valid_and_named_synthetic() -> None:
    corpus = generate(small_config(n_tasks=25))
    for record in corpus.records:
        parsed = TrialRecord.model_validate(record)
        assert parsed.source == "synthetic"
        assert parsed.model.startswith("synthetic-") and parsed.task_id.startswith("synthetic-")


def test_structure_of_attempts_retries_and_tests() -> None:
    config = small_config(n_tasks=60, max_retries=50)
    corpus = generate(config)
    frame = pd.DataFrame(corpus.records)
    counted = frame[frame["counted"]]
    assert len(counted) == sum(m.k for m in config.models) * config.n_tasks
    assert counted.groupby(["model", "task_id"]).size().groupby("model").max().to_dict() == {
        m.name: m.k for m in config.models}
    infra = frame[~frame["counted"]]
    assert len(infra) > 0 and infra["reward"].isna().all() and not infra["passed"].any()
    by_id = frame.set_index("trial_id")
    retries = frame[frame["retry_index"] > 0]
    assert len(retries) > 0
    for r in retries.itertuples():
        parent = by_id.loc[r.retry_of]
        assert parent["retry_index"] == r.retry_index - 1 and not parent["counted"]
        assert (parent["task_id"], parent["attempt"]) == (r.task_id, r.attempt)
    fails = counted[~counted["passed"]]
    assert (fails["n_tests_failed"] >= 1).all()
    near = fails[(fails["n_tests_failed"] == 1) & (fails["n_tests_passed"] >= 8)]
    assert 0.2 < len(near) / len(fails) < 0.6
    wins = counted[counted["passed"]]
    assert (wins["n_tests_failed"] == 0).all()


def test_durations_and_tokens_follow_the_model_medians() -> None:
    fast = SyntheticModel("synthetic-fast", 8, median_win_minutes=5.0,
                          median_win_output_tokens=5_000, infra_error_rate=0.0)
    slow = SyntheticModel("synthetic-slow", 8, median_win_minutes=100.0,
                          median_win_output_tokens=100_000, infra_error_rate=0.0)
    frame = pd.DataFrame(generate(small_config(n_tasks=200, models=(fast, slow))).records)
    wins = frame[frame["passed"]].groupby("model")
    minutes = wins["duration_s"].median() / 60
    assert minutes["synthetic-fast"] == pytest.approx(5.0, rel=0.15)
    assert minutes["synthetic-slow"] == pytest.approx(100.0, rel=0.15)
    tokens = wins["output_tokens"].median()
    assert tokens["synthetic-slow"] / tokens["synthetic-fast"] == pytest.approx(20, rel=0.25)


@pytest.mark.slow
def test_estimated_pass_rates_are_unbiased_against_the_truth(tmp_path: Path) -> None:
    """Across seeds, the mean measured pass rate tracks the mean true rate within noise."""
    gaps = []
    for seed in range(6):
        config = small_config(n_tasks=150, seed=seed)
        corpus = generate(config)
        path = write_jsonl(tmp_path / f"s{seed}.jsonl", corpus.records)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)
            labels = compute_labels(read_trials([path])).frame
        merged = labels.merge(corpus.truth, on=["task_id", "model", "scaffold"])
        measured = merged.dropna(subset=["pass_rate"])
        diff = measured["pass_rate"] - measured["true_pass_rate"]
        se = diff.std(ddof=1) / np.sqrt(len(diff))
        assert abs(diff.mean()) < 4 * se
        gaps.append(diff.mean())
    assert abs(np.mean(gaps)) < 0.01


def test_bad_model_specs_are_refused() -> None:
    assert SyntheticModel.parse("synthetic-x:8:0.4") == SyntheticModel("synthetic-x", 8, 0.4)
    for spec in ("x", "x:0", "x:8:1.5", "x:eight"):
        with pytest.raises(OptionError):
            SyntheticModel.parse(spec)
    with pytest.raises(OptionError):
        small_config(models=(SyntheticModel("a", 2), SyntheticModel("a", 8)))
    with pytest.raises(OptionError):
        dataclasses.replace(SyntheticModel("a", 2), infra_error_rate=1.0)
