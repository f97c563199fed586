"""``termgrade regrade SOURCE --tasks DIR -o OUT``: a recorded run's kept work scored again."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR

if TYPE_CHECKING:
    from termgrade.grade.regrade import RegradeReport
    from termgrade.records.trial import TrialRecord

_SHOWN = 20


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def regrade(
        source: Path = typer.Argument(..., help="The output folder (-o) of a `termgrade "
                                      "grade --keep-work` run; only read."),
        tasks: list[Path] = typer.Option(..., "--tasks", help="The task dirs, or folders of "
                                         "them, as they are now (the changed tests)."),
        out_dir: Path = typer.Option(..., "--output", "-o", help="A new output folder for the "
                                     "regrade run (never the source); a rerun resumes."),
        run: str | None = typer.Option(None, "--run", help="The source run to regrade, by "
                                       "job id or name (default: the folder's only run)."),
        run_name: str | None = typer.Option(None, "--run-name", help="Name the regrade run."),
        workers: int = typer.Option(2, "--workers", "-w", min=1,
                                    help="Trials regraded at once (two containers each)."),
    ) -> None:
        """Score a run's kept work again against changed tests, as a new run (no agent).

        Each trial's work kept by `grade --keep-work` is carried into a fresh scoring
        container of the task as it is now and verified exactly as grading does. Trials
        without kept work, or whose task's instruction or environment changed, are listed
        as must-rerun. Exit 0 when every kept trial was regraded."""
        from termgrade.cli.grade import terminate_like_ctrl_c
        from termgrade.grade.regrade import regrade_run

        with terminate_like_ctrl_c():  # SIGTERM as Ctrl-C: no container left, exit 143
            report = regrade_run(source, tasks, out_dir, run=run, run_name=run_name,
                                 workers=workers)
        _print(report)
        report.check()
        STDERR.print(f"next: termgrade labels {report.trials_path} -o labels.jsonl")


def _print(report: RegradeReport) -> None:
    changed = report.changed()
    STDERR.print(f"regraded {len(report.records)} trial(s) of run {report.source_job_id} "
                 f"into run {report.job_id} ({report.resumed} resumed): {len(changed)} "
                 "changed", highlight=False)
    for before, after in changed[:_SHOWN]:
        STDERR.print(f"  {escape(before.trial_id)}: {escape(change_said(before, after))}",
                     highlight=False, soft_wrap=True)
    if report.not_asked:
        STDERR.print(f"{len(report.not_asked)} trial(s) of tasks not under --tasks left as "
                     "they are (not asked for)", highlight=False)
    for title, trials in (("must be rerun", report.must_rerun), ("refused", report.refused),
                          ("lost (rerun the command: it resumes)", report.lost)):
        if trials:
            STDERR.print(f"[yellow]{len(trials)} trial(s) {title}:[/]")
            for trial, why in list(trials.items())[:_SHOWN]:
                STDERR.print(f"  {escape(trial)}: {escape(why)}", highlight=False)
    STDERR.print(f"trials: {report.trials_path}", highlight=False)


def _outcomes(record: TrialRecord) -> dict[str, str]:
    return {t.name: str(t.outcome.value) for t in record.tests}


def _said(record: TrialRecord, name: str) -> str | None:
    """What the test's failure said (the first line of its message), when recorded."""
    for entry in record.failure_messages:
        head, sep, message = entry.partition(": ")
        if sep and head == name and message:
            return message
    return None


def change_said(before: TrialRecord, after: TrialRecord) -> str:
    """``reward 1.0 -> 0.0 (fails now): test_x passed -> failed: <its message>`` (up to
    5 tests whose outcome changed, with what a new failure said)."""
    direction = ("passes now" if after.passed and not before.passed else
                 "fails now" if before.passed and not after.passed else "same verdict")
    was, now = _outcomes(before), _outcomes(after)
    flips = sorted(name for name, outcome in now.items() if was.get(name) != outcome)
    flips += sorted(name for name in was if name not in now)
    parts = []
    for name in flips[:5]:
        text = f"{name} {was.get(name, 'absent')} -> {now.get(name, 'absent')}"
        said = _said(after, name) if now.get(name) in ("failed", "error") else None
        parts.append(text + (f": {said}" if said else ""))
    more = f"; and {len(flips) - 5} more" if len(flips) > 5 else ""
    return (f"reward {before.reward} -> {after.reward} ({direction})"
            + (": " + "; ".join(parts) if parts else "") + more)
