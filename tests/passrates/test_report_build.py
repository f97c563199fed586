"""The grading report: every section checked against a direct computation."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from termgrade.core.errors import DataWarning
from termgrade.labels import compute_labels, write_labels
from termgrade.passrates import (
    PassRateOptions,
    PassRateReport,
    build_report,
    load_inputs,
    write_report,
)
from termgrade.trialsets import read_trials
from tests.support.labels import cli_app, small_corpus_file, trial, write_jsonl

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_corpus_file(tmp_path_factory.mktemp("report") / "trials.jsonl", n_tasks=90)


def quiet_inputs(*paths: Path):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return load_inputs(list(paths))


def test_label_sections(corpus: Path) -> None:
    inputs = quiet_inputs(corpus)
    report = build_report(inputs, PassRateOptions(n_boot=300))
    labels = inputs.labels
    assert [c.config for c in report.configs] == sorted(
        labels["model"].unique(), key=lambda m: labels.loc[labels["model"] == m,
                                                             "pass_rate"].mean())
    for c in report.configs:
        rows = labels[labels["model"] == c.model]
        assert c.pass_at_1.value == pytest.approx(rows["pass_rate"].mean())
        assert c.pass_at_1.se == pytest.approx(rows["pass_rate"].std(ddof=1) / np.sqrt(90))
        assert (c.pass_at_8 is None) == (c.k < 8)
        if c.pass_at_8 is not None:
            assert c.pass_at_8.value is not None and c.pass_at_8.value >= c.pass_at_1.value
        assert sum(c.bands.values()) == c.n_tasks == 90
    assert len(report.paired) == 3
    pair = report.paired[0]
    wide = labels.pivot(index="task_id", columns="model", values="pass_rate")
    assert pair.diff_pp == pytest.approx(100 * (wide[pair.a] - wide[pair.b]).mean())
    central = {m: set(g.loc[g["band"] == "central", "task_id"]) for m, g in labels.groupby("model")}
    a, b = report.jaccard.names[:2]
    expected = len(central[a] & central[b]) / len(central[a] | central[b])
    assert report.jaccard.matrix[0][1] == pytest.approx(expected)
    assert set(report.jaccard.in_all) == set.intersection(*central.values())


def test_trial_sections(corpus: Path) -> None:
    inputs = quiet_inputs(corpus)
    report = build_report(inputs, PassRateOptions(n_boot=0))
    trials = inputs.trials
    assert trials is not None and report.cost and report.near_misses and report.turns
    for row in report.cost:
        t = trials[trials["model"] == row.config]
        counted = t[t["counted"]]
        wins = counted[counted["passed"]]
        assert row.trial_hours == pytest.approx(counted["duration_s"].sum() / 3600)
        assert row.trial_hours_all == pytest.approx(t["duration_s"].sum() / 3600)
        assert row.median_win_minutes == pytest.approx(wins["duration_s"].median() / 60)
        assert row.median_win_output_tokens == pytest.approx(wins["output_tokens"].median())
        assert row.n_trials == len(t) and row.n_wins == len(wins)
    counted = trials[trials["counted"]]
    near = counted[~counted["passed"] & (counted["n_tests_failed"] == 1)
                   & (counted["n_tests_passed"] >= 8)]
    assert report.near_misses.total == len(near) > 0
    assert report.near_misses.share == pytest.approx(len(near) / len(counted))
    top_name, top_count = report.near_misses.top_failed_tests[0]
    assert (near["failed_test"] == top_name).sum() == top_count
    turns = {r.config: r for r in report.turns}
    assert turns["synthetic-model-c"].mean_diff_within_task < 0  # fails use 1.5x the turns
    assert turns["synthetic-model-b"].share_two_or_fewer > 0.2  # 30% short trials
    totals = report.cost_totals
    assert totals is not None and totals.input_output_ratio == pytest.approx(
        trials["input_tokens"].sum() / trials["output_tokens"].sum())


def test_labels_only_and_labels_from_trials_agree(corpus: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        labels = compute_labels(read_trials([corpus]))
    path = tmp_path / "labels.jsonl"
    write_labels(path, labels)
    from_labels = build_report(quiet_inputs(path), PassRateOptions(n_boot=200))
    from_trials = build_report(quiet_inputs(corpus), PassRateOptions(n_boot=200))
    assert from_labels.configs == from_trials.configs
    assert from_labels.paired == from_trials.paired
    assert from_labels.jaccard == from_trials.jaccard
    assert from_labels.cost is None and from_labels.near_misses is None
    both = build_report(quiet_inputs(path, corpus), PassRateOptions(n_boot=200))
    assert both.configs == from_trials.configs and both.cost == from_trials.cost


def test_written_report(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report, written = write_report(quiet_inputs(corpus), out,
                                   PassRateOptions(n_boot=200, selected={"train": [0.5, 0.375]}))
    names = {p.name for p in written}
    assert names == {"report.json", "report.md", "pass_rate_histograms.png", "grpo_weight.png",
                     "jaccard.png", "pass1_vs_trial_hours.png"}
    for path in written:
        if path.suffix == ".png":
            assert path.read_bytes().startswith(PNG) and path.stat().st_size > 5000
    again = PassRateReport.model_validate_json((out / "report.json").read_text())
    assert again == report
    markdown = (out / "report.md").read_text()
    for heading in ("## Pass rates", "## Paired comparisons", "## Difficulty does not transfer",
                    "## Cost", "## Near-misses", "## Turns", "## Figures"):
        assert heading in markdown
    assert not list(out.glob(".*.tmp"))


def test_missing_tasks_and_issues_reach_the_report(tmp_path: Path) -> None:
    rows = [trial(t, m, attempt=i, passed=(i + len(t)) % 2 == 0, turns=3 + i,
                  duration_s=60.0 * (i + 1), output_tokens=100, input_tokens=400)
            for m in ("m1", "m2") for t in ("aa", "b", "cc") for i in range(4)]
    rows = [r for r in rows if not (r["model"] == "m2" and r["task_id"] == "cc")]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    with pytest.warns(DataWarning, match="no trials for 1"):
        inputs = load_inputs([path])
    report = build_report(inputs, PassRateOptions(n_boot=100))
    assert report.paired[0].n_common == 2
    assert any("missing_tasks" in issue for issue in report.issues)


def test_report_cli(corpus: Path, tmp_path: Path) -> None:
    splits = tmp_path / "splits.jsonl"
    splits.write_text("\n".join(json.dumps(r) for r in [
        {"task_id": "x", "split": "unseen", "pass_rate": 0.1},
        {"task_id": "y", "split": "unseen", "pass_rate": None},
        {"task_id": "z", "split": "train9", "pass_rate": 0.5}]) + "\n")
    done = CliRunner().invoke(cli_app(), ["report", str(corpus), "-o", str(tmp_path / "r"),
                                          "--splits", str(splits), "--n-boot", "100",
                                          "--no-plots"])
    assert done.exit_code == 0, done.output
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["plots"] == [] and len(data["configs"]) == 3
    assert not list((tmp_path / "r").glob("*.png"))
    done = CliRunner().invoke(cli_app(), ["report", str(tmp_path / "none.jsonl"), "-o",
                                          str(tmp_path / "r2")])
    assert done.exit_code == 1 and "no such file" in done.output
    frame = pd.read_json(tmp_path / "r" / "report.json", typ="series")
    assert frame["central_band"] == "central"


def test_the_grpo_figure_annotates_only_the_users_data() -> None:
    """No paper figures ("0.99 at p=0.45") on a user's plot: notes come from their sets."""
    from termgrade.passrates.plots import curve_annotations, grpo_curve

    assert curve_annotations(None) == [] and curve_annotations({"train": []}) == []
    [(x, y, text)] = curve_annotations({"train": [0.25, 0.75, float("nan")]})
    assert (x, y) == (0.5, 1.0)
    assert text == "train: mean p=0.50, mean weight 0.75"
    assert "0.45" not in text and "0.36" not in text
    assert grpo_curve({"train": [0.25, 0.75]})[:4] == b"\x89PNG"
