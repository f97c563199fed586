"""Labels from trials: pass rates over counted trials only, k, bands, and the warnings."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from termgrade.core.errors import DataWarning, OptionError, RecordError
from termgrade.labels import (
    BandScheme,
    compute_labels,
    parse_k,
    read_labels,
    sniff_kind,
    write_labels,
)
from termgrade.trialsets import read_trials
from tests.support.labels import trial, write_jsonl


def labels_of(tmp_path: Path, rows: list[dict[str, Any]], **kwargs: Any) -> Any:
    path = write_jsonl(tmp_path / "trials.jsonl", rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return compute_labels(read_trials([path]), **kwargs)


def row(labels: Any, task: str, model: str = "m") -> dict[str, Any]:
    frame = labels.frame
    found = frame[(frame["task_id"] == task) & (frame["model"] == model)]
    assert len(found) == 1
    return dict(found.iloc[0])


def test_pass_rates_bands_and_k(tmp_path: Path) -> None:
    rows = [trial("half", attempt=i, passed=i < 4) for i in range(8)]
    rows += [trial("none", attempt=i) for i in range(8)]
    rows += [trial("all", attempt=i, passed=True) for i in range(8)]
    rows += [trial("low", attempt=i, passed=i == 0) for i in range(8)]
    labels = labels_of(tmp_path, rows)
    assert row(labels, "half") | {} == row(labels, "half")
    half = row(labels, "half")
    assert (half["pass_rate"], half["band"], half["n_counted"], half["k"], half["n_passed"]) == (
        0.5, "central", 8, 8, 4)
    assert row(labels, "none")["band"] == "zero"
    assert row(labels, "all")["band"] == "one"
    assert row(labels, "low")["band"] == "low"
    assert labels.issues == []


def test_infra_errors_never_move_a_pass_rate(tmp_path: Path) -> None:
    rows = [trial("a", attempt=0, counted=False), trial("a", attempt=0, passed=True, retry=1),
            trial("a", attempt=1), trial("b", attempt=0, counted=False),
            trial("b", attempt=1, counted=False)]
    labels = labels_of(tmp_path, rows)
    a, b = row(labels, "a"), row(labels, "b")
    assert (a["pass_rate"], a["n_counted"], a["k"]) == (0.5, 2, 2)
    assert np.isnan(b["pass_rate"]) and pd.isna(b["band"]) and b["n_counted"] == 0
    written = labels.rows()
    assert next(r for r in written if r.task_id == "b").pass_rate is None
    assert any(i.kind == "mixed_k" and i.count == 1 for i in labels.issues)


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(outcomes=st.lists(st.booleans(), min_size=1, max_size=8),
       infra=st.lists(st.tuples(st.integers(0, 7), st.integers(1, 3)), max_size=10))
def test_property_uncounted_trials_change_nothing(tmp_path: Path, outcomes: list[bool],
                                                  infra: list[tuple[int, int]]) -> None:
    base = [trial("t", attempt=i, passed=p, retry=9) for i, p in enumerate(outcomes)]
    noisy = base + [trial("t", attempt=a, counted=False, retry=r) for a, r in set(infra)]
    clean = labels_of(tmp_path, base).frame
    dirty = labels_of(tmp_path, noisy).frame
    pd.testing.assert_frame_equal(clean, dirty)


def test_mixed_k_and_missing_tasks_are_warned_with_counts(tmp_path: Path) -> None:
    rows = [trial(t, "big", attempt=i) for t in ("a", "b", "c") for i in range(8)]
    rows = [r for r in rows if not (r["task_id"] == "c" and r["attempt"] > 4)]
    rows += [trial(t, "small", attempt=i) for t in ("a", "b") for i in range(2)]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    with pytest.warns(DataWarning) as caught:
        labels = compute_labels(read_trials([path]))
    issues = {i.kind: i for i in labels.issues}
    assert issues["mixed_k"].count == 1 and "big" in issues["mixed_k"].message
    assert "min 5" in issues["mixed_k"].message
    assert issues["missing_tasks"].count == 1 and "small" in issues["missing_tasks"].message
    assert len(caught) >= 2
    assert row(labels, "a", "small")["k"] == 2
    assert row(labels, "c", "big")["k"] == 8


def test_explicit_k_keeps_the_first_k_attempts(tmp_path: Path) -> None:
    rows = [trial("a", attempt=i, passed=i >= 2) for i in range(4)]
    labels = labels_of(tmp_path, rows, k=2)
    a = row(labels, "a")
    assert (a["n_counted"], a["n_passed"], a["k"]) == (2, 0, 2)
    assert {i.kind for i in labels.issues} == {"beyond_k"}
    by_model = labels_of(tmp_path, rows, k={"m": 8})
    assert row(by_model, "a")["k"] == 8 and row(by_model, "a")["n_counted"] == 4


def test_parse_k() -> None:
    assert parse_k(None) is None
    assert parse_k(["8"]) == 8
    assert parse_k(["a=8", "b:x=2"]) == {"a": 8, "b:x": 2}
    for bad in (["0"], ["x"], ["a=b"], ["=3"]):
        with pytest.raises(OptionError):
            parse_k(bad)


def test_custom_bands(tmp_path: Path) -> None:
    rows = [trial("a", attempt=i, passed=i < 5) for i in range(10)]
    scheme = BandScheme.from_cuts([0.2, 0.4], ["none", "hard", "mid", "easy", "all"])
    assert row(labels_of(tmp_path, rows, scheme=scheme), "a")["band"] == "easy"


def test_label_files_round_trip_and_are_checked(tmp_path: Path) -> None:
    rows = [trial(t, attempt=i, passed=i < 3) for t in ("a", "b") for i in range(4)]
    labels = labels_of(tmp_path, rows)
    path = tmp_path / "labels.jsonl"
    assert write_labels(path, labels) == 2
    assert sniff_kind(path) == "labels"
    assert sniff_kind(tmp_path / "trials.jsonl") == "trials"
    back = read_labels([path])
    pd.testing.assert_frame_equal(back, labels.frame, check_dtype=False)
    lines = path.read_text().splitlines()
    bad = lines[1].replace('"n_passed": 3', '"n_passed": 5')
    (tmp_path / "bad.jsonl").write_text(lines[0] + "\n" + bad + "\n")
    with pytest.raises(RecordError, match=r"bad.jsonl:2: field 'n_passed'"):
        read_labels([tmp_path / "bad.jsonl"])
    with pytest.raises(RecordError, match="second row"):
        read_labels([path, path])
    (tmp_path / "odd.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(RecordError, match="neither a trial record nor a label row"):
        sniff_kind(tmp_path / "odd.jsonl")


def test_no_trials_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        trials = read_trials([tmp_path / "empty.jsonl"])
    with pytest.raises(RecordError, match="no trial records"):
        compute_labels(trials)


def test_unattested_tasks_are_left_out_unless_included(tmp_path: Path) -> None:
    rows = [trial("plain", attempt=i, passed=i < 2, attested=True) for i in range(4)]
    rows += [trial("bash", attempt=i, passed=True, attested=False) for i in range(4)]
    rows += [trial("old", attempt=i, passed=i < 1) for i in range(4)]  # no field: unknown
    labels = labels_of(tmp_path, rows)
    assert sorted(labels.frame["task_id"]) == ["old", "plain"]
    assert row(labels, "plain")["attested"] is True and row(labels, "old")["attested"] is None
    [issue] = [i for i in labels.issues if i.kind == "unattested"]
    assert issue.count == 1 and "left out 1 unattested task(s) (bash)" in issue.message
    assert "--include-unattested" in issue.message
    with pytest.warns(DataWarning, match="including 1 unattested task"):
        included = compute_labels(read_trials([tmp_path / "trials.jsonl"]),
                                  include_unattested=True)
    assert row(included, "bash")["attested"] is False
    assert row(included, "bash")["pass_rate"] == 1.0
    path = tmp_path / "labels.jsonl"
    write_labels(path, included)
    back = read_labels([path]).set_index("task_id")["attested"].to_dict()
    assert back == {"bash": False, "old": None, "plain": True}


def test_one_unattested_trial_makes_its_task_unattested_for_every_model(tmp_path: Path) -> None:
    rows = [trial("t", "m1", attested=True), trial("t", "m2", attested=False),
            trial("u", "m1", attested=True)]
    labels = labels_of(tmp_path, rows)
    assert list(labels.frame["task_id"]) == ["u"]
    with pytest.raises(RecordError, match="every task is unattested"):
        labels_of(tmp_path, [trial("t", attested=False)])
