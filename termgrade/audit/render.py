"""Rendering an :class:`AuditReport`: JSON lines, a Markdown report, rich tables."""

from __future__ import annotations

import json
from collections.abc import Iterator

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from termgrade.audit.records import AuditReport, ContaminationMatch, TaskAudit


def json_lines(report: AuditReport) -> Iterator[str]:
    """One JSON record per task of ours (:class:`TaskAudit`), keys sorted."""
    for task in report.tasks:
        yield json.dumps(task.model_dump(mode="json"), sort_keys=True)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_lines(report: AuditReport) -> list[str]:
    s = report.settings
    failing = sum(1 for task in report.tasks if not task.passed)
    by_check = ", ".join(f"{name} {n}" for name, n in sorted(report.failures_by_check().items()))
    return [
        f"tasks audited: {len(report.tasks)}; passing: {len(report.tasks) - failing}; "
        f"with findings: {failing}",
        f"static check failures: {by_check or 'none'}",
        f"near-duplicate pairs (estimated Jaccard of {s.shingle_size}-word shingles >= "
        f"{s.threshold:g}): {len(report.pairs)}",
        f"contamination flags ({s.ngram}-gram containment >= {s.contamination_threshold:g}, "
        f"against {report.external_tasks} external tasks): "
        f"{len(report.flagged_contamination())}",
    ]


def _contamination_rows(report: AuditReport) -> Iterator[tuple[TaskAudit, ContaminationMatch]]:
    for task in report.tasks:
        for match in task.contamination:
            yield task, match


def markdown(report: AuditReport) -> str:
    out = ["# Corpus audit", "", *(f"- {line}" for line in summary_lines(report)), ""]
    out += ["## Static checks", ""]
    failures = [(t.task_id, name, reason) for t in report.tasks
                for name, reason in t.failed_checks.items()]
    if failures:
        out += ["| task | check | reason |", "| --- | --- | --- |"]
        out += [f"| {task} | {name} | {_cell(reason)} |" for task, name, reason in failures]
    else:
        out.append("Every task passes every check.")
    out += ["", "## Near-duplicates", ""]
    if report.pairs:
        out += ["| field | task | task | estimated Jaccard | exact Jaccard |",
                "| --- | --- | --- | ---: | ---: |"]
        out += [f"| {p.field} | {p.task_a} | {p.task_b} | {p.estimated_jaccard:.3f} | "
                f"{p.jaccard:.3f} |" for p in report.pairs]
    else:
        out.append("No pair reaches the threshold.")
    out += ["", "## Contamination", ""]
    rows = list(_contamination_rows(report))
    if rows:
        out += ["| task | field | closest external task | containment | reverse | flagged |",
                "| --- | --- | --- | ---: | ---: | --- |"]
        out += [f"| {t.task_id} | {m.field} | {_cell(m.external_id)} | {m.containment:.3f} | "
                f"{m.reverse_containment:.3f} | {'**yes**' if m.flagged else 'no'} |"
                for t, m in rows]
    elif report.external_tasks:
        out.append("No task shares an n-gram with any external task.")
    else:
        out.append("Not checked: no external benchmark given (`--against DIR`).")
    if report.external_problems:
        out += ["", "External tasks read only in part:", ""]
        out += [f"- {_cell(problem)}" for problem in report.external_problems]
    return "\n".join(out) + "\n"


def _status(task: TaskAudit) -> str:
    return "[green]ok[/]" if task.passed else "[red]flagged[/]"


MAX_TABLE_ROWS = 60
"""Rows of the terminal table; a larger corpus is shown in full by --json / --markdown."""
MAX_CELL_ITEMS = 4
"""Near-duplicates shown per task in the terminal table."""


def render(report: AuditReport, console: Console, *, max_rows: int = MAX_TABLE_ROWS) -> None:
    """Rich tables: one row per task (flagged tasks first, at most ``max_rows``), then a
    summary."""
    table = Table(title="termgrade audit")
    for column in ("task", "status", "failed checks", "near-duplicates", "closest external"):
        table.add_column(column, overflow="fold")
    ordered = sorted(report.tasks, key=lambda t: t.passed)
    for task in ordered[:max_rows]:
        failed = "\n".join(escape(f"{name}: {reason[:160]}")
                            for name, reason in task.failed_checks.items())
        dups = [f"{escape(p.other(task.task_id))} ({p.field} {p.estimated_jaccard:.2f})"
                for p in task.near_duplicates[:MAX_CELL_ITEMS]]
        if len(task.near_duplicates) > MAX_CELL_ITEMS:
            dups.append(f"... {len(task.near_duplicates) - MAX_CELL_ITEMS} more")
        closest = "\n".join(
            f"{'[red]' if m.flagged else ''}{escape(m.external_id)} ({m.field} {m.score:.2f})"
            f"{'[/]' if m.flagged else ''}" for m in task.contamination)
        table.add_row(escape(task.task_id), _status(task), failed, "\n".join(dups), closest)
    console.print(table)
    if len(ordered) > max_rows:
        console.print(f"... {len(ordered) - max_rows} more tasks not shown: see --json or "
                      "--markdown for every task", highlight=False)
    for line in summary_lines(report):
        console.print(escape(line), highlight=False)
    for problem in report.external_problems:
        console.print(f"[yellow]external task read in part:[/] {escape(problem)}",
                      highlight=False)
