"""``termgrade runs DIR``: the grading runs an output folder holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR

if TYPE_CHECKING:
    from termgrade.records.run import RunRecord


def _plan(record: RunRecord | None) -> str:
    """k as the run planned it: ``8``, or ``2-8 adaptive``; blank before run records."""
    if record is None:
        return ""
    return f"{record.k_min}-{record.k} adaptive" if record.adaptive else str(record.k)


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
                    "started": run.started.isoformat() if run.started else None,
                    "finished": run.finished.isoformat() if run.finished else None,
                    "record": run.record.model_dump(mode="json") if run.record else None}))
            return
        table = Table(title=f"runs in {folder} ({len(found.files)} trials file(s))")
        for column in ("run", "name", "model", "scaffold", "config", "k", "tasks", "trials",
                       "counted", "passed", "reused", "started", "file"):
            table.add_column(column, overflow="fold")
        for run in found.runs:
            regrade = run.record.regrade_of if run.record is not None else None
            name = " ".join(filter(None, (run.name, f"(regrade of {regrade})" if regrade
                                          else None)))
            table.add_row(run.job_id or "(before run ids)", name, run.model,
                          run.scaffold, ", ".join(run.configs), _plan(run.record),
                          str(len(run.tasks)),
                          str(run.trials), str(run.counted), str(run.passed), str(run.reused),
                          f"{run.started:%Y-%m-%d %H:%M}" if run.started else "",
                          str(run.trials_path))
        Console(soft_wrap=False).print(table)
        if not found.runs:
            STDERR.print(f"no trials under {folder}: `termgrade grade -o {folder}` writes "
                         "them", highlight=False)
