"""The root Typer app; each command module registers itself here."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import Any, cast

import typer
import typer.main
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from termgrade.core.errors import TermGradeError
from termgrade.core.progress import STDERR
from termgrade.core.settings import SETTINGS

COMMANDS: dict[str, tuple[str, str]] = {
    "verify": ("verify", "Execution filtering: one verdict per task (exit 0 iff all are "
                         "verified)."),
    "generate": ("generate", "Generate tasks with a model, repair them against the execution "
                             "filter, audit."),
    "grade": ("grade", "Grade a model on the tasks, k attempts each, in a registered "
                       "scaffold."),
    "run": ("run", "Build the task, run an agent phase, copy the tests in, verify, print the "
                   "reward."),
    "regrade": ("regrade", "Score a run's kept work again against changed tests, as a new run "
                           "(no agent)."),
    "runs": ("runs", "List the grading runs in a folder: run, name, model, k, tasks, trial "
                     "counts."),
    "doctor": ("doctor", "Check the engine, base image and disk; say how to fix each problem."),
    "schemas": ("schemas", "Regenerate schemas/*.schema.json from the typed models."),
    "audit": ("audit", "Audit the corpus: static checks, near-duplicates, contamination."),
    "labels": ("labels", "One label row per task x model x scaffold: pass_rate, band, n_counted, "
                         "k, n_passed."),
    "synth": ("labels", "Write a synthetic grading corpus (everything named synthetic) with a "
                        "known truth."),
    "report": ("report", "Per model pass@1 and pass@k with standard errors, paired comparisons "
                         "of every two"),
    "select": ("select", "Pick the N tasks nearest 0.5 within --range (no hand curation), then "
                         "VAL_N near"),
    "validate": ("validate", "Check the card YAML and configs, every row against schemas/, "
                             "row-group budgets,"),
    "secrets": ("secrets", "Review the secret scan's findings of a staged repo."),
    "publish": ("publish", "Validate DIR, plan its diff against the Hub repo (adds, changes, "
                           "stale deletes),"),
    "materialize": ("materialize", "Unpack a task's archive (refusing unsafe archives), check "
                                   "it against the row's"),
    "base-image": ("base_image", "The shared image every task starts FROM."),
    "corpus": ("corpus", "Corpus-level files (the task table README)."),
    "ingest": ("ingest", "Read other harnesses' trial output into TrialRecords."),
    "build": ("build", "Stage a complete repo on disk (temp dir + rename)."),
    "train": ("train", "Reproduce the GRPO++ run with verl on the bandcentral repo."),
    "view": ("view", "A local web viewer of a grading run: a task x model grid, filters, "
                     "trial pages."),
}
"""Command -> (module under termgrade.cli, the first line of its help). Listing commands
reads only this table; a command's module, and what it imports, loads when it runs. A
test checks each line against the command's own help."""


class LazyGroup(TyperGroup):
    """The root group: lists commands from :data:`COMMANDS`, imports one when it is used."""

    _listing = False

    # Typer names its click context and formatter types only in a private module (it vendors
    # click since 0.26): these overrides take them as ``object`` or pass them on unnamed.

    def list_commands(self, ctx: object) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: object, cmd_name: str) -> TyperCommand | TyperGroup | None:
        if cmd_name not in COMMANDS:
            return None
        module, summary = COMMANDS[cmd_name]
        if self._listing:
            return TyperCommand(cmd_name, help=summary)
        # Typer makes each command of a Typer app a TyperCommand, each sub-app a TyperGroup.
        return cast("TyperCommand | TyperGroup | None",
                    load_group(module).commands.get(cmd_name))

    def format_help(self, *args: Any, **kwargs: Any) -> None:
        self._listing = True
        try:
            super().format_help(*args, **kwargs)
        finally:
            self._listing = False


@functools.cache
def load_group(module: str) -> TyperGroup:
    """The click commands a ``termgrade.cli.<module>`` registers, imported on first use."""
    sub = typer.Typer()
    importlib.import_module(f"termgrade.cli.{module}").register(sub)
    return typer.main.get_group(sub)


app = typer.Typer(
    name="termgrade",
    cls=LazyGroup,
    help="Build, verify, grade, package and publish executable Linux tasks for terminal agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        from termgrade.core.version import __version__

        typer.echo(f"termgrade {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
        version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                     help="Print TermGrade's version and exit."),
) -> None:
    """Build, verify, grade, package and publish executable Linux tasks for terminal agents."""


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
        except OSError as exc:  # a file the command read or wrote: name it, no traceback
            if SETTINGS.debug:
                raise
            where = f"{exc.filename}: " if exc.filename else ""
            STDERR.print(f"[bold red]error:[/] {escape(where + (exc.strerror or str(exc)))}",
                         highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            STDERR.print("[yellow]interrupted[/]")
            raise typer.Exit(130) from None

    return wrapper


def take_sigint() -> None:
    """Ctrl-C stops the command even when it was started with SIGINT ignored (a
    background job of a script, ``nohup ... &``): Python then installs no handler, and a
    run, a build or a server would go on past Ctrl-C, leaving its containers."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> None:
    take_sigint()
    if SETTINGS.debug:
        app()
        return
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
