"""``termgrade report``: the grading report (Markdown, JSON, PNG) from labels or trials."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.cli.labels import parse_floats, parse_names, print_issues, quietly
from termgrade.core.progress import STDERR
from termgrade.records.near_miss import NEAR_MISS_MIN_PASSED


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def report(
        inputs: list[Path] = typer.Argument(..., help="labels.jsonl and/or trial JSONL files "
                                            "(trials add cost, near-miss and turn sections)."),
        output: Path = typer.Option(..., "--output", "-o", help="Directory to write into."),
        splits: Path | None = typer.Option(None, "--splits", help="splits.jsonl: mark the "
                                           "chosen tasks on the 4p(1-p) figure (every split "
                                           "but 'unseen', or else the largest)."),
        central_band: str = typer.Option("central", "--band",
                                         help="Band compared across models (Jaccard)."),
        cuts: str = typer.Option("0.25,0.75", "--cuts", help="Band cut points (for trials)."),
        band_names: str | None = typer.Option(None, "--band-names"),
        near_miss_min_passed: int = typer.Option(NEAR_MISS_MIN_PASSED, "--near-miss-min-passed",
                                                  min=0),
        n_boot: int = typer.Option(2000, "--n-boot", min=0, help="Bootstrap resamples."),
        seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
        plots: bool = typer.Option(True, "--plots/--no-plots"),
    ) -> None:
        """Pass rates per model, paired comparisons, cost and near-misses, as a report.

        Per model pass@1 and pass@k with standard errors, paired comparisons of every two
        models, Jaccard overlap of band-central sets, cost, near-misses, turns; written to
        OUTPUT/report.md, report.json and PNG figures (atomically)."""
        from termgrade.labels import BandScheme
        from termgrade.passrates import PassRateOptions, load_inputs, write_report
        from termgrade.selection import read_splits

        scheme = BandScheme.from_cuts(parse_floats(cuts, "--cuts"), parse_names(band_names))
        inputs_ = quietly(lambda: load_inputs(inputs, scheme=scheme))
        print_issues(inputs_.issues)
        selected: dict[str, list[float]] = {}
        if splits is not None:
            frame = read_splits([splits])
            counts = frame["split"].value_counts()
            unseen = "unseen" if "unseen" in counts.index else counts.idxmax()
            for name, rows in frame[frame["split"] != unseen].groupby("split", sort=True):
                selected[str(name)] = rows["pass_rate"].dropna().astype(float).tolist()
        options = PassRateOptions(central_band=central_band, seed=seed, n_boot=n_boot,
                                near_miss_min_passed=near_miss_min_passed, plots=plots,
                                selected=selected)
        _, written = write_report(inputs_, output, options)
        for path in written:
            STDERR.print(f"wrote {path}")
