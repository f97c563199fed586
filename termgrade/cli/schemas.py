"""``termgrade schemas``: write or check the JSON Schemas in schemas/."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR
from termgrade.validate.schemas import default_schema_dir, stale_schemas, write_schemas


def register(app: typer.Typer) -> None:
    @app.command()
    @guarded
    def schemas(
        directory: Path | None = typer.Option(
            None, "--dir", help="Default: the checkout's schemas/, else the installed copy."),
        check: bool = typer.Option(False, "--check", help="Exit 1 if any file is stale."),
    ) -> None:
        """Regenerate schemas/*.schema.json from the typed models."""
        if check:
            stale = stale_schemas(directory)
            for name in stale:
                STDERR.print(f"[red]stale:[/] {directory or default_schema_dir()} / {name} "
                             "(run `termgrade schemas`)")
            raise typer.Exit(1 if stale else 0)
        for path in write_schemas(directory):
            STDERR.print(f"wrote {path}")
