"""The CLI's error mapping reaches every stage's own errors (issue 35, item 5): each error
class in a floor's ``errors.py`` that subclasses ``TermGradeError``, raised inside a
command, prints ``error:`` with its message and fix and exits 1, without a traceback; a
stage's signal (not a ``TermGradeError``) is not swallowed as one."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from termgrade.cli.app import guarded
from termgrade.core.errors import TermGradeError

PACKAGE = Path(__file__).resolve().parents[2] / "termgrade"


def stage_errors() -> list[type[BaseException]]:
    found = []
    for path in sorted(PACKAGE.glob("*/errors.py")):
        module = importlib.import_module(f"termgrade.{path.parent.name}.errors")
        found += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                  if issubclass(cls, BaseException) and cls.__module__ == module.__name__]
    return found


def _instance(cls: type[BaseException]) -> BaseException:
    """One of ``cls``, its required arguments filled with strings."""
    params = [p for p in inspect.signature(cls.__init__).parameters.values()
              if p.name != "self" and p.default is inspect.Parameter.empty
              and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    args: list[Any] = [f"<{p.name}>" for p in params] or ["something failed"]
    return cls(*args)


def _run(exc: BaseException) -> Any:
    app = typer.Typer()

    @app.command()
    @guarded
    def fail() -> None:
        raise exc

    return CliRunner().invoke(app, [])


def test_there_are_stage_errors_to_map() -> None:
    names = {cls.__name__ for cls in stage_errors()}
    assert {"PublishError", "SandboxError", "TaskLoadError", "PageNotFound"} <= names


@pytest.mark.parametrize("cls", [c for c in stage_errors() if issubclass(c, TermGradeError)],
                         ids=lambda c: c.__name__)
def test_every_stage_error_exits_1_with_its_message(cls: type[TermGradeError]) -> None:
    exc = _instance(cls)
    done = _run(exc)
    assert done.exit_code == 1, done.output
    assert "error:" in done.output and str(exc).splitlines()[0] in done.output
    assert "Traceback" not in done.output


@pytest.mark.parametrize("cls", [c for c in stage_errors()
                                 if not issubclass(c, TermGradeError | OSError)],
                         ids=lambda c: c.__name__)
def test_a_stage_signal_is_not_mapped_as_a_known_error(cls: type[BaseException]) -> None:
    done = _run(_instance(cls))
    assert done.exit_code != 1 or "error:" not in done.output
    assert isinstance(done.exception, cls)
