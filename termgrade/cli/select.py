"""``termgrade select``: band-central training and validation tasks -> split flags."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.cli.labels import parse_floats, parse_names, print_issues, quietly
from termgrade.core.errors import OptionError
from termgrade.core.progress import STDERR


def _external(spec: str) -> tuple[str, Path]:
    name, sep, path = spec.partition("=")
    if sep and name and path:
        return name, Path(path)
    return Path(spec).stem, Path(spec)


def register(app: typer.Typer) -> None:
    @app.command("select")
    @guarded
    def select_cmd(
        labels: list[Path] = typer.Argument(..., help="labels.jsonl of the base model."),
        model: str = typer.Option(..., "--model", help="The model you will train."),
        scaffold: str | None = typer.Option(None, "--scaffold", help="Needed when the model "
                                            "was graded under several scaffolds."),
        n: int = typer.Option(151, "--n", min=0, help="Training tasks."),
        band: tuple[float, float] = typer.Option((0.25, 0.75), "--range",
                                                 help="Pass-rate range for training."),
        val_n: int = typer.Option(60, "--val-n", min=0, help="Validation tasks per target."),
        val_targets: str = typer.Option("0.25,0.75", "--val-targets",
                                        help="Pass rates in [0, 1] to pick validation near."),
        val_max_distance: float = typer.Option(
            0.2, "--val-max-distance",
            help="A validation task's pass rate is within this of its target."),
        external: list[str] = typer.Option(None, "--external", help="[NAME=]labels.jsonl of "
                                           "another task set graded the same way (repeatable)."),
        split_names: str | None = typer.Option(None, "--split-names", help="unseen,train,"
                                               "validation (default unseen,train{N},"
                                               "heldout{2*VAL_N})."),
        tiebreak: str = typer.Option("hash", "--tiebreak", help="hash (sha256 of id) or id."),
        rollouts: int = typer.Option(16, "--rollouts", min=1, help="GRPO group size G."),
        output: Path = typer.Option(..., "--output", "-o", help="splits.jsonl to write."),
        plot: bool = typer.Option(True, "--plot/--no-plot"),
        include_unattested: bool = typer.Option(
            False, "--include-unattested", help="Select from unattested tasks too (graded by "
            "test.sh's own reward, which the grader cannot attest); left out by default."),
    ) -> None:
        """Pick the band-central training and validation tasks, and say why.

        Pick the N tasks nearest 0.5 within --range (no hand curation), then VAL_N near
        each validation target from the rest; write one split row per pool task and a
        selection report (4p(1-p) per chosen task, expected share of all-equal groups)
        beside OUTPUT."""
        from termgrade.labels import read_labels
        from termgrade.selection import (
            SelectionConfig,
            select_band_central,
            write_selection_report,
            write_splits,
        )

        names = parse_names(split_names)
        if names is not None and len(names) != 3:
            raise OptionError(f"--split-names {split_names!r}: give three names",
                              fix="e.g. --split-names unseen,train151,heldout120")
        config = SelectionConfig(
            model=model, scaffold=scaffold, n=n, lo=band[0], hi=band[1], val_n=val_n,
            val_targets=parse_floats(val_targets, "--val-targets"),
            val_max_distance=val_max_distance, tiebreak=tiebreak,
            rollouts=rollouts, split_names=(names[0], names[1], names[2]) if names else None,
            include_unattested=include_unattested)
        frame = read_labels(labels)
        extra = [(name, read_labels([path])) for name, path in map(_external, external or [])]
        selection = quietly(lambda: select_band_central(frame, config, extra))
        print_issues(selection.issues)
        count = write_splits(output, selection)
        written = write_selection_report(selection, output, plot=plot)
        split_counts = selection.pool["split"].value_counts()
        STDERR.print("splits: " + ", ".join(f"{k} {v}" for k, v in split_counts.items()))
        STDERR.print(f"wrote {count} split rows to {output}; report: "
                     + ", ".join(str(p) for p in written))
