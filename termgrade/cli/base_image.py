"""``termgrade base-image build``."""

from __future__ import annotations

from pathlib import Path

import typer

from termgrade.cli.app import guarded
from termgrade.core.progress import STDERR
from termgrade.core.settings import SETTINGS
from termgrade.sandbox.images import BASE_IMAGE_DIR, build_base_image


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The shared image every task starts FROM.", no_args_is_help=True)
    app.add_typer(group, name="base-image")

    @group.command("build")
    @guarded
    def build(
        context: Path = typer.Option(BASE_IMAGE_DIR, help="The base_image/ folder."),
        rebuild: bool = typer.Option(False, help="Rebuild even if the image exists."),
    ) -> None:
        """Build termgrade/base:local (bootstrapping the Debian OS image if needed)."""
        built = build_base_image(context, rebuild=rebuild)
        if built is None:
            STDERR.print(f"{SETTINGS.base_image} exists (use --rebuild to rebuild)")
        else:
            STDERR.print(f"built {built.tag} in {built.duration_s:.0f} s")
