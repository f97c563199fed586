"""The band-central rule: nearest 0.5 in range, bimodal validation, external sets, splits."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from termgrade.core.errors import DataWarning, OptionError
from termgrade.labels import DEFAULT_SCHEME
from termgrade.records import SplitRow
from termgrade.selection import (
    SelectionConfig,
    build_selection_report,
    read_splits,
    select_band_central,
    split_rows,
    write_selection_report,
    write_splits,
)
from termgrade.stats import all_equal_probability
from tests.support.labels import cli_app


def labels(rates: dict[str, float | None], model: str = "base", scaffold: str = "bash",
           k: int = 8) -> pd.DataFrame:
    rows = []
    for task, p in rates.items():
        n_passed = 0 if p is None else round(p * k)
        rows.append({"task_id": task, "model": model, "scaffold": scaffold,
                     "pass_rate": np.nan if p is None else p,
                     "band": None if p is None else DEFAULT_SCHEME.band(p),
                     "n_counted": 0 if p is None else k, "k": k, "n_passed": n_passed})
    return pd.DataFrame(rows)


EIGHTHS = {f"t{i:03d}": (i % 9) / 8 for i in range(90)}


def test_training_takes_the_tasks_nearest_one_half_within_range() -> None:
    selection = select_band_central(labels(EIGHTHS), SelectionConfig("base", n=25, val_n=5))
    train = selection.chosen("train")
    assert len(train) == 25
    assert (train["pass_rate"].iloc[:10] == 0.5).all()  # all ten tasks at 0.5 come first
    assert set(train["pass_rate"].iloc[10:]) == {0.375, 0.625}
    assert selection.n_in_range == 50
    assert train["pass_rate"].between(0.25, 0.75).all()


def test_ties_are_broken_by_the_hash_of_the_id() -> None:
    selection = select_band_central(labels(EIGHTHS), SelectionConfig("base", n=15, val_n=0))
    second_tier = selection.chosen("train")["task_id"].iloc[10:].tolist()
    tied = [t for t, p in EIGHTHS.items() if p in (0.375, 0.625)]
    by_hash = sorted(tied, key=lambda t: hashlib.sha256(t.encode()).hexdigest())
    assert second_tier == by_hash[:5]
    by_id = select_band_central(labels(EIGHTHS),
                                SelectionConfig("base", n=15, val_n=0, tiebreak="id"))
    assert by_id.chosen("train")["task_id"].iloc[10:].tolist() == sorted(tied)[:5]


def test_validation_is_bimodal_and_disjoint() -> None:
    selection = select_band_central(labels(EIGHTHS), SelectionConfig("base", n=30, val_n=10))
    train, val = selection.chosen("train"), selection.chosen("validation")
    assert not set(train["task_id"]) & set(val["task_id"])
    low = val[val["val_target"] == 0.25]
    high = val[val["val_target"] == 0.75]
    assert (low["pass_rate"] == 0.25).all() and (high["pass_rate"] == 0.75).all()
    assert len(low) == len(high) == 10
    splits = selection.pool["split"].value_counts().to_dict()
    assert splits == {"unseen": 40, "train30": 30, "heldout20": 20}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::termgrade.core.errors.DataWarning")
@settings(max_examples=50, deadline=None)
@given(rates=st.lists(st.sampled_from([None, *[i / 8 for i in range(9)], 1 / 3, 0.49]),
                      min_size=1, max_size=60),
       n=st.integers(0, 40), val_n=st.integers(0, 10))
def test_selection_invariants(rates: list[float | None], n: int, val_n: int) -> None:
    frame = labels({f"x{i}": p for i, p in enumerate(rates)})
    selection = select_band_central(frame, SelectionConfig("base", n=n, val_n=val_n))
    pool = selection.pool
    train = pool[pool["role"] == "train"]
    assert len(pool) == len(rates) and pool["task_id"].is_unique
    assert len(train) == min(n, selection.n_in_range)
    assert train["pass_rate"].between(0.25, 0.75).all()
    inside = pool[pool["pass_rate"].between(0.25, 0.75) & (pool["role"] != "train")]
    if len(inside) and len(train):
        assert (inside["pass_rate"] - 0.5).abs().min() >= (train["pass_rate"] - 0.5).abs().max()
    assert pool.loc[pool["pass_rate"].isna(), "split"].eq("unseen").all()
    assert (pool["role"] == "validation").sum() <= 2 * val_n


def test_external_sets_join_the_pool() -> None:
    corpus = labels({f"c{i}": 0.125 for i in range(20)} | {"c_mid": 0.5})
    seta = labels({f"seta-{i}": 0.5 for i in range(4)} | {"seta-x": None})
    selection = select_band_central(corpus, SelectionConfig("base", n=5, val_n=2),
                                    [("seta", seta)])
    train = selection.chosen("train")
    assert train["source"].value_counts().to_dict() == {"seta": 4, "corpus": 1}
    rows = split_rows(selection)
    assert len(rows) == 26 and all(isinstance(r, SplitRow) for r in rows)
    assert {r.source for r in rows} == {"corpus", "seta"}
    with pytest.raises(OptionError, match="share a task id"):
        select_band_central(corpus, SelectionConfig("base"), [("dup", corpus)])


def test_wrong_model_or_ambiguous_scaffold() -> None:
    frame = pd.concat([labels(EIGHTHS), labels(EIGHTHS, scaffold="terminus-2"),
                       labels(EIGHTHS, model="other", scaffold="terminus-2")])
    with pytest.raises(OptionError, match="no labels for model 'nope'") as info:
        select_band_central(frame, SelectionConfig("nope"))
    assert "base" in str(info.value) and "other" in str(info.value)
    with pytest.raises(OptionError, match="several scaffolds"):
        select_band_central(frame, SelectionConfig("base"))
    chosen = select_band_central(frame, SelectionConfig("base", scaffold="bash", n=3, val_n=0))
    assert len(chosen.pool) == 90
    with pytest.raises(OptionError):
        SelectionConfig("base", lo=0.8, hi=0.2)


def test_short_pools_are_reported() -> None:
    with pytest.warns(DataWarning, match="selected 2 of the 10"):
        selection = select_band_central(labels({"a": 0.5, "b": 0.375, "c": 0.0}),
                                        SelectionConfig("base", n=10, val_n=3))
    assert {i.kind for i in selection.issues} == {"short_selection", "short_validation"}


def test_selection_report_numbers(tmp_path: Path) -> None:
    selection = select_band_central(labels(EIGHTHS), SelectionConfig("base", n=20, val_n=4,
                                                                      rollouts=16))
    report = build_selection_report(selection)
    p = selection.chosen("train")["pass_rate"].to_numpy()
    assert report.train_mean_weight == pytest.approx(float((4 * p * (1 - p)).mean()))
    assert report.expected_all_equal_share == pytest.approx(
        float(all_equal_probability(p, 16).mean()))
    assert report.in_range == 50 and report.train_by_source == {"corpus": 20}
    assert report.validation_by_target == {"0.25": 4, "0.75": 4}
    splits = tmp_path / "splits.jsonl"
    assert write_splits(splits, selection) == 90
    written = write_selection_report(selection, splits)
    assert [w.name for w in written] == ["splits.selection.json", "splits.selection.md",
                                         "splits.selection.png"]
    back = read_splits([splits])
    assert back["split"].value_counts().to_dict() == {"unseen": 62, "train20": 20,
                                                      "heldout8": 8}


def test_select_cli(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    frame = labels(EIGHTHS)
    path.write_text("".join(json.dumps({**r, "band": r["band"], "schema_version": "1.0",
                                        "pass_rate": r["pass_rate"]}) + "\n"
                            for r in frame.to_dict("records")))
    ext = tmp_path / "seta.jsonl"
    ext.write_text(json.dumps({"task_id": "seta-1", "model": "base", "scaffold": "bash",
                               "pass_rate": 0.5, "band": "central", "n_counted": 2, "k": 2,
                               "n_passed": 1}) + "\n")
    out = tmp_path / "splits.jsonl"
    done = CliRunner().invoke(cli_app(), [
        "select", str(path), "--model", "base", "--n", "12", "--range", "0.25", "0.75",
        "--val-n", "3", "--external", f"SETA={ext}", "--split-names", "u,tr,va", "-o",
        str(out), "--no-plot"])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 91
    counts = pd.Series([r["split"] for r in rows]).value_counts().to_dict()
    assert counts == {"u": 73, "tr": 12, "va": 6}
    assert next(r for r in rows if r["task_id"] == "seta-1") == {
        "task_id": "seta-1", "split": "tr", "role": "train", "pass_rate": 0.5,
        "source": "SETA", "schema_version": "1.0"}
    assert {(r["split"], r["role"]) for r in rows} == {("u", None), ("tr", "train"),
                                                      ("va", "validation")}
    assert (tmp_path / "splits.selection.md").exists()
    done = CliRunner().invoke(cli_app(), ["select", str(path), "--model", "zzz", "-o", str(out)])
    assert done.exit_code == 1 and "no labels for model 'zzz'" in done.output


def test_unattested_tasks_are_left_out_of_the_pool_unless_included() -> None:
    frame = labels({"plain": 0.5, "bash-only": 0.5, "old": 0.5})
    frame["attested"] = pd.Series([True, False, None], dtype=object)
    with pytest.warns(DataWarning, match=r"left out 1 unattested task\(s\) \(bash-only\)"):
        selection = select_band_central(frame, SelectionConfig("base", n=3, val_n=0))
    assert sorted(selection.pool["task_id"]) == ["old", "plain"]
    assert sorted(selection.chosen("train")["task_id"]) == ["old", "plain"]
    with pytest.warns(DataWarning, match="including 1 unattested task"):
        included = select_band_central(
            frame, SelectionConfig("base", n=3, val_n=0, include_unattested=True))
    assert sorted(included.chosen("train")["task_id"]) == ["bash-only", "old", "plain"]


def test_select_cli_leaves_unattested_tasks_out(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    rows = [{"task_id": t, "model": "base", "scaffold": "bash", "pass_rate": 0.5,
             "band": "central", "n_counted": 2, "k": 2, "n_passed": 1, "attested": a}
            for t, a in (("plain", True), ("bash-only", False))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "splits.jsonl"
    args = ["select", str(path), "--model", "base", "--n", "2", "--val-n", "0", "-o", str(out),
            "--no-plot"]
    done = CliRunner().invoke(cli_app(), args)
    assert done.exit_code == 0, done.output
    assert "unattested" in done.output and "bash-only" in done.output
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == ["plain"]
    done = CliRunner().invoke(cli_app(), [*args, "--include-unattested"])
    assert done.exit_code == 0, done.output
    assert "including 1 unattested" in " ".join(done.output.split())
    assert len(out.read_text().splitlines()) == 2
