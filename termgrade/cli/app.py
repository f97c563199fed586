"""The root Typer app; each command module registers itself here."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import typer
from rich.markup import escape

from termgrade.errors import TermGradeError
from termgrade.progress import STDERR
from termgrade.settings import SETTINGS

app = typer.Typer(
    name="termgrade",
    help="Build, verify, grade, package and publish executable Linux tasks for terminal agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register() -> None:
    # One line per command module; each module's register(app) adds its commands.
    from termgrade.cli import base_image, doctor, run, schemas, verify

    for module in (verify, run, doctor, base_image, schemas):
        module.register(app)


def _register_optional(name: str) -> None:
    """Command modules added by later work register the same way, if present."""
    import importlib

    try:
        module = importlib.import_module(f"termgrade.cli.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"termgrade.cli.{name}":
            raise
        return
    module.register(app)


OPTIONAL_COMMAND_MODULES = ("audit", "corpus", "ingest", "labels", "report", "select",
                            "build", "validate", "publish", "materialize", "train")


def guarded(func: Callable[..., Any]) -> Callable[..., Any]:
    """Known errors -> one message and exit 1; Ctrl-C -> 130; tracebacks only when debugging."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TermGradeError as exc:
            if SETTINGS.debug:
                raise
            STDERR.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False,
                         soft_wrap=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            STDERR.print("[yellow]interrupted[/]")
            raise typer.Exit(130) from None

    return wrapper


def register_commands() -> typer.Typer:
    """Register every command module once (idempotent); the app is ready to invoke."""
    if not app.registered_commands:
        _register()
        for name in OPTIONAL_COMMAND_MODULES:
            _register_optional(name)
    return app


def main() -> None:
    register_commands()
    if os.environ.get("TERMGRADE_DEBUG"):
        app()
        return
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
