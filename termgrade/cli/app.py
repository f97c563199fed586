"""The root Typer app; each command module registers itself here."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast, get_args, get_origin

import typer
import typer.main
from rich.markup import escape
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

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
    "report": ("report", "Pass rates per model, paired comparisons, cost and near-misses, "
                         "as a report."),
    "select": ("select", "Pick the band-central training and validation tasks, and say why."),
    "validate": ("validate", "Check a staged repo before it is published "
                             "(exit 0 iff nothing is found)."),
    "secrets": ("secrets", "Review the secret scan's findings of a staged repo."),
    "publish": ("publish", "Publish a staged repo to the Hub: validated, then one atomic commit."),
    "materialize": ("materialize", "Unpack one task of a repo or parquet "
                                   "into a byte-identical task dir."),
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
        tidy_command(self)
        self._listing = True
        try:
            super().format_help(*args, **kwargs)
        finally:
            self._listing = False


# Help that reads as words. Typer 0.29 shows each parameter's Python annotation as its
# placeholder: ``<bool>`` beside every flag, ``<list[Path]>``, ``<str>``, and a required
# argument as ``{source}`` in the usage line. tidy_command gives every parameter that names
# no metavar of its own the classic one (PATH, TEXT, INTEGER, FLOAT; a flag none), an
# argument its name in capitals (SOURCE, TRIALS..., [PATHS]... when optional).

PLACEHOLDERS: dict[Any, str] = {str: "TEXT", int: "INTEGER", float: "FLOAT", Path: "PATH"}


def _placeholder(annotation: Any) -> str | None:
    """The classic placeholder of one value of ``annotation`` (None: keep Typer's)."""
    if get_origin(annotation) is list:
        (annotation,) = get_args(annotation) or (str,)
    return PLACEHOLDERS.get(annotation)


class TidyArgument(TyperArgument):
    """An argument shown by its name in capitals: ``SOURCE``, ``[PATHS]...``."""

    def _usage_display_name(self) -> str:
        name = self.metavar or self.name or "ARG"
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    def display_type_rich(self, ctx: Any) -> str | None:
        return None  # its name says it


def _tidy_param(param: Any) -> None:
    if isinstance(param, TyperArgument):
        param.metavar = param.metavar or (param.name or "arg").upper()
        param.__class__ = TidyArgument
        return
    if not isinstance(param, TyperOption) or param.metavar is not None:
        return
    if param.is_flag or param.count:
        param.metavar = ""
        return
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    placeholder = _placeholder(annotation)
    if placeholder is not None:
        param.metavar = placeholder


def tidy_command(command: Any) -> Any:
    """``command`` (and, for a group, each of its commands) with tidy placeholders."""
    for param in getattr(command, "params", []):
        _tidy_param(param)
    if isinstance(command, TyperCommand | TyperGroup):  # --help, made once and kept
        _tidy_param(command.get_help_option(typer.Context(command)))
    for sub in getattr(command, "commands", {}).values():
        tidy_command(sub)
    return command


@functools.cache
def load_group(module: str) -> TyperGroup:
    """The click commands a ``termgrade.cli.<module>`` registers, imported on first use."""
    sub = typer.Typer()
    importlib.import_module(f"termgrade.cli.{module}").register(sub)
    return cast(TyperGroup, tidy_command(typer.main.get_group(sub)))


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
