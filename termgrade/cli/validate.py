"""``termgrade validate DIR``: prove a staged repo (card, rows, loading, archives, secrets)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def validate(
        directory: Path = typer.Argument(..., help="A repo staged by `termgrade build`."),
        load: bool = typer.Option(True, "--load/--no-load",
                                  help="Round-trip every config through datasets.load_dataset."),
        secrets: bool = typer.Option(True, "--secrets/--no-secrets",
                                     help="Scan text files with detect-secrets."),
        baseline: Path | None = typer.Option(
            None, "--secrets-baseline",
            help="detect-secrets baseline of reviewed findings (default: "
                 "DIR.secrets.baseline beside DIR, if present)."),
        write_baseline: bool = typer.Option(
            False, "--write-secrets-baseline",
            help="Write the current secret findings to DIR.secrets.baseline (beside DIR) "
                 "and list them; review them with `termgrade secrets review DIR`, then "
                 "rerun validate (this run accepts none of them)."),
        cache: bool = typer.Option(
            True, "--cache/--no-cache",
            help="Skip row and load checks of files unchanged since they passed "
                 "(DIR.validate-cache.json beside DIR)."),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    ) -> None:
        """Check a staged repo before it is published (exit 0 iff nothing is found).

        Check the card YAML and configs, every row against schemas/, row-group budgets,
        datasets loading (also streaming), archives vs manifests and tasks/, registry.json,
        and secrets. Exit 0 iff nothing was found."""
        # datasets' streaming load imports torch whenever it is installed (the `train`
        # extra): about 190 MiB this command never uses. Its own switch turns that off.
        if "datasets" not in sys.modules:
            os.environ.setdefault("USE_TORCH", "0")
        from rich.console import Console
        from rich.markup import escape

        from termgrade.builders.layout import RepoPaths
        from termgrade.validate import validate_repo
        from termgrade.validate.secrets_check import write_baseline as write

        written = None
        if write_baseline:
            paths = RepoPaths(directory.resolve())
            count = write(paths, paths.secrets_baseline)
            written = (f"wrote {count} finding(s) to {paths.secrets_baseline} (listed above "
                       f"as secrets FAIL): review them (`termgrade secrets review "
                       f"{directory}`), then rerun `termgrade validate {directory}`: "
                       "findings marked not secret then pass")
        # A baseline just written is not reviewed: this run shows its findings, accepts none.
        report = validate_repo(directory, load=load, secrets=secrets, secrets_baseline=baseline,
                               cache=cache, accept_baseline=written is None)
        if as_json:
            typer.echo(json.dumps(report.to_dict(), indent=2))
        # The report is the result: stdout (stderr when --json holds stdout); progress and
        # logs stay on stderr.
        out = STDERR if as_json else Console(soft_wrap=True)
        for check, proved in report.passed.items():
            out.print(f"[green]ok[/] {check}: {proved}", highlight=False)
        for note in report.notes:
            out.print(f"note: {escape(note)}", highlight=False)
        for finding in report.findings:
            # A finding names fields in brackets: text, not console markup.
            out.print(f"[red]FAIL[/] {escape(str(finding))}", highlight=False)
        out.print(f"{directory}: " + ("valid" if report.ok else
                                      f"{len(report.findings)} finding(s)"), highlight=False)
        if written is not None:
            STDERR.print(written, highlight=False)
        raise typer.Exit(0 if report.ok else 1)
