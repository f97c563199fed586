"""Build the grading report and write it: report.json, report.md and PNG figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from termgrade.core.atomic import atomic_write_bytes, atomic_write_text
from termgrade.core.errors import OptionError
from termgrade.passrates import plots
from termgrade.passrates.inputs import PassRateInputs
from termgrade.passrates.markdown import render_markdown
from termgrade.passrates.models import PassRateReport
from termgrade.passrates.summary import jaccard_section, paired_comparisons, summarize_configs
from termgrade.passrates.trialstats import cost_rows, cost_totals, near_misses, turn_rows
from termgrade.records.near_miss import NEAR_MISS_MIN_PASSED


@dataclass(frozen=True)
class PassRateOptions:
    central_band: str = "central"
    """Band whose task sets the Jaccard section compares."""
    near_miss_min_passed: int = NEAR_MISS_MIN_PASSED
    n_boot: int = 2000
    seed: int = 0
    plots: bool = True
    selected: Mapping[str, Sequence[float]] = field(default_factory=dict)
    """Pass rates of chosen tasks per split, marked on the 4p(1-p) figure."""


def check_band(inputs: PassRateInputs, band: str) -> None:
    """Refuse a ``--band`` that names no band of the scheme or of the labels."""
    known = set(inputs.scheme.names)
    if "band" in inputs.labels:
        known |= {str(b) for b in inputs.labels["band"].dropna().unique()}
    if band not in known:
        raise OptionError(f"--band {band!r}: no such band (known: {', '.join(sorted(known))})",
                          fix="give one of those, or --cuts/--band-names that define it")


def build_report(inputs: PassRateInputs,
                 options: PassRateOptions = PassRateOptions()) -> PassRateReport:
    check_band(inputs, options.central_band)
    configs = summarize_configs(inputs.labels)
    order = [c.config for c in configs]
    report = PassRateReport(
        inputs=[str(p) for p in inputs.files], band_scheme=inputs.scheme.describe(),
        central_band=options.central_band, configs=configs,
        paired=paired_comparisons(inputs.labels, order, n_boot=options.n_boot,
                                  seed=options.seed),
        jaccard=jaccard_section(inputs.labels, options.central_band, order),
        issues=[str(issue) for issue in inputs.issues])
    if inputs.trials is not None and not inputs.trials.empty:
        report.cost = cost_rows(inputs.trials)
        report.cost_totals = cost_totals(report.cost,
                                         {c.config: c.pass_at_1.value for c in configs})
        report.near_misses = near_misses(inputs.trials, min_passed=options.near_miss_min_passed)
        report.turns = turn_rows(inputs.trials)
    return report


def _figures(report: PassRateReport, inputs: PassRateInputs,
             options: PassRateOptions) -> dict[str, bytes]:
    band = inputs.scheme.bounds_of(options.central_band) or (0.25, 0.75)
    order = [c.config for c in report.configs]
    figures = {
        "pass_rate_histograms.png": plots.pass_rate_histograms(inputs.labels, order, band),
        "grpo_weight.png": plots.grpo_curve(options.selected, band),
    }
    if len(order) > 1:  # one configuration's set overlaps only itself
        figures["jaccard.png"] = plots.jaccard_heatmap(report.jaccard)
    if report.cost:
        figures["pass1_vs_trial_hours.png"] = plots.pass1_vs_hours(report.configs, report.cost)
    return figures


def write_report(inputs: PassRateInputs, out_dir: Path,
                 options: PassRateOptions = PassRateOptions()) -> tuple[PassRateReport, list[Path]]:
    """Compute the report and write it under ``out_dir``; returns it and the paths written."""
    report = build_report(inputs, options)
    written = []
    if options.plots:
        for name, png in _figures(report, inputs, options).items():
            atomic_write_bytes(out_dir / name, png)
            written.append(out_dir / name)
        report.plots = [p.name for p in written]
    atomic_write_text(out_dir / "report.json", report.model_dump_json(indent=2) + "\n")
    atomic_write_text(out_dir / "report.md", render_markdown(report))
    return report, [out_dir / "report.json", out_dir / "report.md", *written]
