"""``termgrade schemas``: write or check the JSON Schemas in schemas/."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.progress import STDERR
from termgrade.schemas import SCHEMA_DIR, stale_schemas, write_schemas


def register(app: typer.Typer) -> None:
    @app.command()
    def schemas(
        directory: Path = typer.Option(SCHEMA_DIR, "--dir"),
        check: bool = typer.Option(False, "--check", help="Exit 1 if any file is stale."),
    ) -> None:
        """Regenerate schemas/*.schema.json from the typed models."""
        if check:
            stale = stale_schemas(directory)
            for name in stale:
                STDERR.print(f"[red]stale:[/] {directory / name} (run `termgrade schemas`)")
            raise typer.Exit(1 if stale else 0)
        for path in write_schemas(directory):
            STDERR.print(f"wrote {path}")
