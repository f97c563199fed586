"""Rendering an :class:`AuditReport`: JSON lines, a Markdown report, rich tables."""

from __future__ import annotations

import json
from collections.abc import Iterator

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from termgrade.audit.records import AuditReport, ContaminationMatch, TaskAudit
from termgrade.audit.static_checks import INFORMATIONAL


def json_lines(report: AuditReport) -> Iterator[str]:
    """One JSON record per task of ours (:class:`TaskAudit`), keys sorted."""
    for task in report.tasks:
        yield json.dumps(task.model_dump(mode="json"), sort_keys=True)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_lines(report: AuditReport) -> list[str]:
    s = report.settings
    failing = sum(1 for task in report.tasks if not task.passed)
    by_check = ", ".join(f"{name} {n}" + (" (informational)" if name in INFORMATIONAL else "")
                         for name, n in sorted(report.failures_by_check().items()))
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


MAX_TABLE_ROWS = 20
"""Task rows of the terminal summary; ``--all`` (or --json / --markdown) shows every task."""
MAX_CELL_ITEMS = 4
"""Near-duplicates shown per task in the terminal table."""


def _counts_table(report: AuditReport) -> Table:
    """Tasks failing each static check, with one example; then the pair and flag counts."""
    table = Table(title="termgrade audit: findings per check")
    for column in ("check", "tasks", "for example"):
        table.add_column(column, no_wrap=True, overflow="ellipsis")
    examples: dict[str, str] = {}
    for task in report.tasks:
        for name in task.failed_checks:
            examples.setdefault(name, task.task_id)
    for name, count in sorted(report.failures_by_check().items()):
        table.add_row(escape(name), str(count), escape(examples[name]))
    dup_tasks = [t for t in report.tasks if t.near_duplicates]
    table.add_row("near-duplicates", str(len(dup_tasks)),
                  escape(dup_tasks[0].task_id) if dup_tasks else "")
    if report.external_tasks:
        contaminated = [t for t in report.tasks if t.contaminated]
        table.add_row("contamination", str(len(contaminated)),
                      escape(contaminated[0].task_id) if contaminated else "")
    return table


def _task_table(tasks: list[TaskAudit], *, full: bool, contamination: bool = True) -> Table:
    """One row per task; ``full``: each failed check's reason and the near-duplicates,
    every cell folded; else a line per flagged task: check names and counts."""
    table = Table(title="termgrade audit")
    if full:
        for column in ("task", "status", "failed checks", "near-duplicates",
                       "closest external"):
            table.add_column(column, overflow="fold")
    else:
        # A task's name is never cut (folded when it must be); the rest is cut to one line.
        table.add_column("task", overflow="fold", ratio=3)
        table.add_column("failed checks", no_wrap=True, overflow="ellipsis", ratio=3,
                         min_width=12)
        table.add_column("near-dups", no_wrap=True, justify="right", min_width=5)
        if contamination:
            table.add_column("contaminated by", no_wrap=True, overflow="ellipsis", ratio=2)
    for task in tasks:
        if not full:
            flagged = task.contaminated
            table.add_row(escape(task.task_id), escape(", ".join(task.failed_checks)),
                          str(len(task.near_duplicates) or ""),
                          *([escape(flagged[0].external_id) if flagged else ""]
                            if contamination else []))
            continue
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
    return table


def render(report: AuditReport, console: Console, *, max_rows: int | None = MAX_TABLE_ROWS
           ) -> None:
    """The audit on a terminal: the findings per check and the first ``max_rows`` flagged
    tasks, one line each (``None``: every task, with its reasons), then a summary. A
    corpus of thousands of tasks stays a screenful."""
    ordered = sorted(report.tasks, key=lambda t: t.passed)
    flagged = [task for task in ordered if not task.passed]
    if max_rows is None:
        console.print(_task_table(ordered, full=True))
    elif flagged:
        console.print(_counts_table(report))
        console.print(_task_table(flagged[:max_rows], full=False,
                                  contamination=bool(report.external_tasks)))
        if len(flagged) > max_rows:
            console.print(f"... {len(flagged) - max_rows} more flagged task(s) not shown: "
                          "--all lists every task with its reasons (so do --markdown FILE "
                          "and --json)", highlight=False)
    for line in summary_lines(report):
        console.print(escape(line), highlight=False)
    for problem in report.external_problems:
        console.print(f"[yellow]external task read in part:[/] {escape(problem)}",
                      highlight=False)
