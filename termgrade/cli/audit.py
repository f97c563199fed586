"""``termgrade audit``: static checks, near-duplicates and contamination of a corpus."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.audit import AuditSettings, audit_corpus
from termgrade.audit.render import MAX_TABLE_ROWS, json_lines, markdown, render
from termgrade.cli.app import guarded
from termgrade.core.atomic import atomic_write_text
from termgrade.core.progress import STDERR

_DEFAULTS = AuditSettings()


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def audit(
        paths: list[Path] = typer.Argument(None, help="Task dirs or folders of them "
                                           "(default: environments)."),
        against: list[Path] = typer.Option(
            [], "--against", help="External benchmark folder (Harbor or Terminal-Bench "
            "format) to check for contamination; repeatable."),
        as_json: bool = typer.Option(False, "--json", help="One JSON record per task on stdout."),
        markdown_file: Path | None = typer.Option(None, "--markdown",
                                                  help="Write a Markdown report here."),
        threshold: float = typer.Option(
            _DEFAULTS.threshold, "--threshold", min=0.01, max=1.0,
            help="Near-duplicate flag: estimated Jaccard of word shingles."),
        contamination_threshold: float = typer.Option(
            _DEFAULTS.contamination_threshold, "--contamination-threshold", min=0.01, max=1.0,
            help="Contamination flag: word n-gram containment, either direction."),
        shingle_size: int = typer.Option(_DEFAULTS.shingle_size, "--shingle-size", min=1,
                                         help="Words per shingle (near-duplicates)."),
        ngram: int = typer.Option(_DEFAULTS.ngram, "--ngram", min=1,
                                  help="Words per n-gram (contamination)."),
        min_tests: int = typer.Option(_DEFAULTS.min_tests, "--min-tests", min=0,
                                      help="Fewest test cases a task may have."),
        show_all: bool = typer.Option(False, "--all", help="List every task with the reason "
                                      "of each failed check (default: the findings per check "
                                      "and the first 20 tasks)."),
    ) -> None:
        """Audit the corpus: static checks, near-duplicates, contamination.

        The audit goes to stdout (to stderr with --json, which stdout then holds); progress
        to stderr. Exit 1 when a check fails or a near-duplicate or contamination flag is
        raised."""
        from rich.console import Console

        settings = AuditSettings(threshold=threshold,
                                 contamination_threshold=contamination_threshold,
                                 shingle_size=shingle_size, ngram=ngram,
                                 num_perm=_DEFAULTS.num_perm, min_tests=min_tests)
        report = audit_corpus(paths or [Path("environments")], against=against,
                              settings=settings)
        if as_json:
            for line in json_lines(report):
                typer.echo(line)
        if markdown_file is not None:
            atomic_write_text(markdown_file, markdown(report))
            STDERR.print(f"wrote {markdown_file}")
        render(report, STDERR if as_json else Console(),
               max_rows=None if show_all else MAX_TABLE_ROWS)
        raise typer.Exit(0 if report.passed else 1)
