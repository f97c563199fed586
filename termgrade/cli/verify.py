"""``termgrade verify``: execution filtering of task directories."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from termgrade.cli.app import guarded
from termgrade.core.atomic import atomic_write_jsonl
from termgrade.core.progress import STDERR
from termgrade.core.settings import SETTINGS
from termgrade.verify import Journal, VerifyReport, verify_tasks

MAX_TABLE_ROWS = 60
"""Rows of the terminal table (tasks not kept first); --json has every record."""


def render_summary(report: VerifyReport, *, max_rows: int = MAX_TABLE_ROWS) -> None:
    table = Table(title="termgrade verify", show_lines=False)
    for column in ("task", "verdict", "oracle", "nop", "tests", "why"):
        table.add_column(column, overflow="fold")
    colors = {"verified": "green", "flaky": "yellow", "vacuous": "yellow",
              "no_solution": "yellow"}
    ordered = sorted(report.records, key=lambda r: r.verdict.value == "verified")
    for r in ordered[:max_rows]:
        color = colors.get(r.verdict.value, "red")
        oracle = ",".join("-" if x is None else f"{x:g}" for x in r.oracle_rewards)
        nop = "-" if r.nop_reward is None else f"{r.nop_reward:g}"
        table.add_row(escape(r.task_id), f"[{color}]{r.verdict.value}[/]", oracle, nop,
                      str(r.n_assertions), escape((r.reason or r.error or "")[:240]))
    STDERR.print(table)
    if len(ordered) > max_rows:
        STDERR.print(f"... {len(ordered) - max_rows} more tasks not shown: --json has every "
                     "record", highlight=False)
    online = [r.task_id for r in report.records if r.wants_internet]
    if online:
        STDERR.print(f"[yellow]{len(online)} task(s) ask for the network (\\[environment] "
                     "allow_internet = true); verify ran them offline[/]: "
                     + escape(", ".join(online[:5]) + (" ..." if len(online) > 5 else "")))
    funnel = report.funnel()
    steps = [f"candidates {funnel.pop('candidates')}", f"kept {funnel.pop('kept')}"]
    steps += [f"{k.split(':', 1)[1]} {v}" for k, v in funnel.items()]
    STDERR.print("funnel: " + " -> ".join(steps[:2]) + ("; dropped: " + ", ".join(steps[2:])
                                                        if steps[2:] else ""))
    for line in report.unreadable:
        STDERR.print(f"[yellow]warning:[/] {escape(line)}", highlight=False, soft_wrap=True)
    if report.resumed:
        STDERR.print(f"{report.resumed} record(s) resumed from the journal")


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def verify(
        paths: list[Path] = typer.Argument(None, help="Task dirs or folders of them."),
        repeat: int = typer.Option(2, "--repeat", "-n", min=1, help="Oracle runs per task."),
        workers: int = typer.Option(2, "--workers", "-w", min=1, help="Tasks in parallel."),
        as_json: bool = typer.Option(False, "--json", help="One JSON record per task on stdout."),
        output: Path | None = typer.Option(None, "--output", "-o", help="Write records (JSONL)."),
        journal: Path = typer.Option(SETTINGS.state_dir / "verify-journal.jsonl", "--journal",
                                     help="Where finished records are journaled."),
        resume: bool = typer.Option(False, "--resume", help="Skip tasks finished in the journal."),
        attacks: bool = typer.Option(
            False, "--attacks", help="Also play every attack of the battery as the agent; "
            "a task where one earns a reward is `hackable`."),
        attack: list[str] = typer.Option(
            None, "--attack", help="Play only this attack (repeatable; implies --attacks)."),
        ray: str | None = typer.Option(
            None, "--ray", metavar="ADDRESS",
            help="run on a Ray cluster at ADDRESS, e.g. 127.0.0.1:6379; each node needs "
            "Docker and TermGrade installed"),
    ) -> None:
        """Execution filtering: one verdict per task (exit 0 iff all are verified).

        Builds each task offline, runs its reference solution --repeat times and an
        untouched container once against its verifier."""
        from termgrade.attacks import load_attacks

        battery = load_attacks(attack or None) if (attacks or attack) else None
        roots = paths or [Path("environments")]
        if ray is None:
            report = verify_tasks(roots, repeat=repeat, workers=workers,
                                  journal=Journal(journal), resume=resume, attacks=battery)
        else:
            from termgrade.pools.executors import make_pool

            pool = make_pool(workers, ray)
            try:
                report = verify_tasks(roots, repeat=repeat, journal=Journal(journal),
                                      resume=resume, attacks=battery, pool=pool)
            finally:
                pool.shutdown()
        if as_json:
            for record in report.records:
                typer.echo(json.dumps(record.model_dump(mode="json"), sort_keys=True))
        if output is not None:
            atomic_write_jsonl(output, (r.model_dump(mode="json") for r in report.records))
        render_summary(report)
        raise typer.Exit(0 if report.all_verified else 1)
