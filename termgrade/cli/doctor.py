"""``termgrade doctor``."""

from __future__ import annotations

import typer
from rich.table import Table

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR
from termgrade.sandbox.doctor import run_checks


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def doctor(
        reap: bool = typer.Option(False, "--reap", help="Remove the TermGrade containers "
                                  "that no live run owns (what interrupted runs left)."),
    ) -> None:
        """Check the engine, base image and disk; say how to fix each problem."""
        checks = run_checks(reap=reap)
        table = Table(title="termgrade doctor")
        for column in ("check", "ok", "detail", "fix"):
            table.add_column(column, overflow="fold")
        for check in checks:
            mark = ("[red]FAIL[/]" if not check.ok else "[yellow]warn[/]" if check.warn
                    else "[green]ok[/]")
            table.add_row(check.name, mark, check.detail, check.fix or "")
        STDERR.print(table)
        raise typer.Exit(0 if all(c.ok for c in checks) else 1)
