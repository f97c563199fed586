"""``termgrade materialize``: one dataset row back to a runnable task directory."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.materialize import materialize


def register(app: typer.Typer) -> None:
    @app.command("materialize")
    @guarded
    def materialize_command(
        source: str = typer.Argument(..., help="A tasks parquet file, a staged repo dir, "
                                               "or a Hub dataset repo id (namespace/name)."),
        task_id: str = typer.Argument(..., help="The task_id of the row."),
        to: Path = typer.Option(..., "--to", help="Where to create the task: DIR itself "
                                "when it is named TASK_ID, else DIR/TASK_ID (a task's id "
                                "is its directory name)."),
        revision: str | None = typer.Option(None, "--revision", help="Hub revision."),
    ) -> None:
        """Unpack one task of a repo or parquet into a byte-identical task dir.

        Unpack a task's archive (refusing unsafe archives), check it against the row's
        file manifest, and create DIR byte-identical to the packed task, modes included.
        Then `termgrade run DIR` runs it."""
        result = materialize(source, task_id, to, revision=revision)
        typer.echo(f"{result.task_id}: {result.n_files} files ({result.n_bytes:,} bytes) "
                   f"-> {result.path}  [from {result.source}]")
