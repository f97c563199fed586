"""The report says only what its data carry: histogram bins on one side of the band's
edges, no claim about score and cost from a few points, no comparison of one model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from termgrade.passrates import PassRateOptions, load_inputs, write_report
from termgrade.passrates.models import ConfigSummary
from termgrade.passrates.plots import band_counts, band_span, cost_title
from tests.support.labels import trial, write_jsonl


@pytest.mark.parametrize("k", range(1, 17))
@pytest.mark.parametrize("band", [(0.25, 0.75), (0.2, 0.8), (0.3, 0.6)])
def test_no_bar_straddles_the_shaded_band(k: int, band: tuple[float, float]) -> None:
    span = band_span(k, band)
    half = 0.45 / max(k, 8)  # the bars' half width
    for i in range(k + 1):
        rate = i / k
        inside = band[0] <= rate <= band[1]
        if span is None:
            assert not inside
            continue
        lo, hi = rate - half, rate + half
        if inside:
            assert span[0] <= lo and hi <= span[1], (k, band, rate, span)
        else:
            assert hi <= span[0] or lo >= span[1], (k, band, rate, span)


def test_band_span_of_eighths_covers_whole_bins() -> None:
    assert band_span(8, (0.25, 0.75)) == (0.1875, 0.8125)


def test_a_rate_between_bins_keeps_the_colour_of_its_own_band() -> None:
    inside, outside = band_counts(np.array([0.24, 0.25, 0.5, 0.76, 1.0]), 8, (0.25, 0.75))
    assert inside.tolist() == [0, 0, 1, 0, 1, 0, 0, 0, 0]
    assert outside.tolist() == [0, 0, 1, 0, 0, 0, 1, 0, 1]


def _summary(config: str, p1: float) -> ConfigSummary:
    stat = {"value": p1, "se": 0.01, "n_tasks": 10, "n_excluded": 0}
    return ConfigSummary.model_validate({
        "config": config, "model": config, "scaffold": "bash", "k": 8, "n_tasks": 10,
        "n_measured": 10, "n_counted_trials": 80, "pass_at_1": {"k": 1, **stat},
        "pass_at_k": {"k": 8, **stat}, "pass_at_8": None, "bands": {}})


def test_the_cost_figure_claims_nothing_from_two_points() -> None:
    two = [_summary("a", 0.4), _summary("b", 0.6)]
    title = cost_title(two, {"a": 10.0, "b": 20.0})
    assert "too few to say" in title and "independent" not in title
    five = [_summary(n, p) for n, p in zip("abcde", (0.1, 0.2, 0.3, 0.4, 0.5), strict=True)]
    hours = dict(zip("abcde", (5.0, 4.0, 3.0, 2.0, 1.0), strict=True))
    assert cost_title(five, hours).endswith("Spearman rho -1.00")


def test_one_model_gets_no_empty_comparison_tables(tmp_path: Path) -> None:
    rows = [trial(t, "only-model", attempt=i, passed=(i + len(t)) % 3 == 0, turns=3,
                  duration_s=60.0, output_tokens=100, input_tokens=400)
            for t in ("aa", "bbb", "cccc", "d") for i in range(8)]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    out = tmp_path / "report"
    _, written = write_report(load_inputs([path]), out, PassRateOptions(n_boot=50))
    markdown = (out / "report.md").read_text()
    assert "## Paired comparisons" not in markdown
    assert "Difficulty does not transfer" not in markdown
    assert "One configuration (`only-model" in markdown and "need two or more" in markdown
    assert "jaccard.png" not in {p.name for p in written}
    assert "| pair |" not in markdown


def test_attested_and_unattested_pass_rates_are_reported_apart(tmp_path: Path) -> None:
    """Issue 44, item 12: labels written with --include-unattested gave one pass@1 (0.75)
    over a vouched 0.5 and test.sh's own 1.0; the report now gives each apart."""
    import json

    from termgrade.labels import compute_labels, write_labels
    from termgrade.trialsets import read_trials

    rows = [trial("a", "m", attempt=i, passed=i == 0, attested=True) for i in range(2)]
    rows += [trial("b", "m", attempt=i, passed=True, attested=False) for i in range(2)]
    trials = write_jsonl(tmp_path / "t.jsonl", rows)
    labels = tmp_path / "labels.jsonl"
    write_labels(labels, compute_labels(read_trials([trials]), include_unattested=True))
    out = tmp_path / "report"
    write_report(load_inputs([labels]), out, PassRateOptions(n_boot=50))
    (config,) = json.loads((out / "report.json").read_text())["configs"]
    apart = {kind: stat["value"] for kind, stat in config["pass_at_1_by_attestation"].items()}
    assert apart == {"attested": 0.5, "unattested": 1.0} and config["pass_at_1"]["value"] == 0.75
    markdown = (out / "report.md").read_text()
    assert "| m | attested | 1 | 0.5000" in markdown and "| m | unattested | 1 | 1.0000" \
        in markdown, markdown
