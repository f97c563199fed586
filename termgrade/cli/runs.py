"""``termgrade runs DIR``: the grading runs an output folder holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR

if TYPE_CHECKING:
    from rich.console import RenderableType

    from termgrade.grade.runs import RunSummary
    from termgrade.records.run import RunRecord


def _plan(record: RunRecord | None) -> str:
    """k as the run planned it: ``8``, or ``2-8 adaptive``; blank before run records."""
    if record is None:
        return ""
    return f"{record.k_min}-{record.k} adaptive" if record.adaptive else str(record.k)


def _rates(run: RunSummary) -> str:
    """Pass rates kept apart by attestation: ``attested 0.50 of 8, unattested 1.00 of 2``
    (a vouched number never pooled with an unvouched one)."""
    from termgrade.grade.runs import ATTESTATION_KINDS

    parts = [f"{kind} {run.rate(kind) or 0:.2f} of {run.by_attestation[kind][0]}"
             for kind in ATTESTATION_KINDS if run.by_attestation.get(kind, [0])[0]]
    return ", ".join(parts) or "-"


def _stacked(run: RunSummary) -> RenderableType:
    """One run as a header line and short labelled lines: readable at 80 columns and
    wider (ids and paths fold whole onto their own lines rather than into columns)."""
    from rich.padding import Padding
    from rich.table import Table

    regrade = run.record.regrade_of if run.record is not None else None
    head = " ".join(filter(None, (run.job_id or "(before run ids)", run.name and
                                  f"({run.name})", regrade and f"regrade of {regrade}")))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(overflow="fold")
    config = f", config {', '.join(run.configs)}" if run.configs else ""
    plan = _plan(run.record)
    rows = [("model", f"{run.model} ({run.scaffold}{config})"),
            ("plan", f"k {plan or '?'}, {len(run.tasks)} task(s)"),
            ("trials", f"{run.trials}: {run.counted} counted, {run.passed} passed, "
                       f"{run.reused} reused"),
            ("pass rate", _rates(run)),
            ("started", f"{run.started:%Y-%m-%d %H:%M}" if run.started else "-"),
            ("file", str(run.trials_path))]
    for label, value in rows:
        grid.add_row(label, escape(value))
    outer = Table.grid()
    outer.add_column(overflow="fold")
    outer.add_row(f"[bold]{escape(head)}[/]")
    outer.add_row(Padding(grid, (0, 0, 0, 2)))
    return outer


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def runs(
        folder: Path = typer.Argument(..., help="A `termgrade grade` output folder (-o), a "
                                      "folder of them, or a trials.jsonl."),
        as_json: bool = typer.Option(False, "--json", help="One JSON object per run on "
                                     "stdout."),
    ) -> None:
        """List the grading runs in a folder: run, name, model, k, tasks, trial counts."""
        from termgrade.grade.runs import list_runs

        found = list_runs(folder)
        for line in found.unreadable:
            STDERR.print(f"[yellow]warning:[/] {escape(str(line))}", highlight=False,
                         soft_wrap=True)
        if as_json:
            for run in found.runs:
                typer.echo(json.dumps({
                    "trials_path": str(run.trials_path), "job_id": run.job_id,
                    "run_name": run.name, "model": run.model, "scaffold": run.scaffold,
                    "configs": run.configs, "tasks": len(run.tasks), "trials": run.trials,
                    "counted": run.counted, "passed": run.passed, "reused": run.reused,
                    "by_attestation": {kind: {"counted": n, "passed": p} for kind, (n, p)
                                       in run.by_attestation.items()},
                    "started": run.started.isoformat() if run.started else None,
                    "finished": run.finished.isoformat() if run.finished else None,
                    "record": run.record.model_dump(mode="json") if run.record else None}))
            return
        console = Console()
        console.print(f"runs in {escape(str(folder))} ({len(found.files)} trials file(s))",
                      highlight=False)
        for run in found.runs:
            console.print(_stacked(run), highlight=False)
        if not found.runs:
            STDERR.print(f"no trials under {folder}: `termgrade grade -o {folder}` writes "
                         "them", highlight=False)
