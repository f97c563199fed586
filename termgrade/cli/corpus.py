"""``termgrade corpus``: corpus-level files, e.g. the generated environments/README.md."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.audit.corpus_readme import readme_is_stale, readme_path, write_readme
from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR

corpus_app = typer.Typer(help="Corpus-level files (the task table README).",
                         no_args_is_help=True)


@corpus_app.command()
@guarded
def readme(
    directory: Path = typer.Option(Path("environments"), "--dir",
                                   help="The corpus folder."),
    check: bool = typer.Option(False, "--check", help="Exit 1 if the README is stale."),
) -> None:
    """Regenerate DIR/README.md, the table of every task.

    One row per task (domain, difficulty, tests), then totals by domain and difficulty."""
    if check:
        if readme_is_stale(directory):
            STDERR.print(f"[red]stale:[/] {readme_path(directory)} "
                         "(run `termgrade corpus readme`)")
            raise typer.Exit(1)
        STDERR.print(f"up to date: {readme_path(directory)}")
        return
    STDERR.print(f"wrote {write_readme(directory)}")


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")
