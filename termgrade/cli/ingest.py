"""``termgrade ingest``: other harnesses' trial output -> trials.jsonl (TrialRecord rows)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import typer
from rich.table import Table

from termgrade.cli.app import guarded
from termgrade.core.errors import DataWarning
from termgrade.core.progress import STDERR
from termgrade.ingest import IngestResult, ingest_harbor, write_jsonl
from termgrade.ingest.errors import IngestError
from termgrade.ingest.summary import group_summaries, summary_json

ingest_app = typer.Typer(help="Read other harnesses' trial output into TrialRecords.",
                         no_args_is_help=True)


@ingest_app.command()
@guarded
def harbor(
    job_dirs: list[Path] = typer.Argument(..., help="Harbor job folders (`harbor run -o`), "
                                          "trial folders, or folders of jobs."),
    output: Path = typer.Option(..., "--output", "-o", help="trials.jsonl to write."),
    transcripts: bool = typer.Option(True, "--transcripts/--no-transcripts",
                                     help="Include messages and full episodes."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    tasks: list[Path] = typer.Option(
        [], "--tasks", "-t", help="The task folders the job graded: each trial records its "
        "task's content digest (for `grade --reuse` and `labels`)."),
) -> None:
    """Read Harbor job folders into TrialRecord rows, one per finished trial.

    Attempts are numbered per task x model x scaffold by start time.

    Infrastructure errors are kept with counted=false, never as task failures.

    Unfinished or unreadable trial folders are skipped and listed; the output is atomic."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # listed below instead
        result = ingest_harbor(job_dirs, transcripts=transcripts, task_roots=tasks)
    if not result.records:
        raise IngestError(", ".join(map(str, job_dirs)), "no finished trial to ingest "
                          f"({len(result.skipped)} skipped)",
                          fix="wait for the job to finish, or check the skipped folders")
    write_jsonl(output, result.records)
    if as_json:
        typer.echo(json.dumps(summary_json(result), indent=2))
    else:
        _print_summary(result)
    for skipped in result.skipped:
        STDERR.print(f"[yellow]skipped ({skipped.kind}):[/] {skipped.path}: {skipped.reason}")
    for note in result.notes:
        STDERR.print(f"[yellow]note:[/] {note}")
    STDERR.print(f"wrote {len(result.records)} trials to {output}")


def _print_summary(result: IngestResult) -> None:
    table = Table(title="Harbor trials")
    for column in ("task", "model", "scaffold", "trials", "counted", "passed", "not counted"):
        table.add_column(column)
    for g in group_summaries(result):
        table.add_row(g.task_id, g.model, g.scaffold, str(g.trials), str(g.counted),
                      str(g.passed), ", ".join(g.uncounted_reasons))
    STDERR.print(table)
    layouts = ", ".join(f"{n} {name}" for name, n in sorted(result.layouts.items()))
    STDERR.print(f"layouts: {layouts}; skipped: {result.skipped_count('incomplete')} "
                 f"incomplete, {result.skipped_count('malformed')} malformed; "
                 f"duplicates: {result.duplicates}")


def register(app: typer.Typer) -> None:
    app.add_typer(ingest_app, name="ingest")
