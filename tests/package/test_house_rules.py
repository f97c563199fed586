"""Promises the package keeps about where things live: every exception class in
``termgrade/core/errors.py``, every environment variable read in
``termgrade/core/settings.py``, no private module of a dependency imported.

The code run inside containers (no TermGrade there) is outside these rules."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "termgrade"
IN_CONTAINERS = (PACKAGE / "scoring" / "incontainer", PACKAGE / "attacks" / "scripts")
ERRORS = PACKAGE / "core" / "errors.py"
SETTINGS = PACKAGE / "core" / "settings.py"

ENVIRONMENT_PASSED_ON = {
    ("pools/processes.py", "PYTHONPATH"),  # the workers' PYTHONPATH, extended and passed on
    ("pools/ray_executor.py", "LOOPBACK_ENV"),  # Ray's own switch, set for Ray
}
"""Reads of a variable that only hand it on to a child process or to Ray."""


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if not any(path.is_relative_to(skip) for skip in IN_CONTAINERS):
            yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text())


def _base_names(node: ast.ClassDef) -> list[str]:
    return [base.id if isinstance(base, ast.Name) else base.attr
            for base in node.bases if isinstance(base, ast.Name | ast.Attribute)]


def _is_exception_name(name: str, ours: set[str]) -> bool:
    builtin = getattr(builtins, name, None)
    return name in ours or (isinstance(builtin, type) and issubclass(builtin, BaseException)) \
        or name.endswith(("Error", "Exception", "Warning"))


def test_every_exception_class_is_defined_in_core_errors() -> None:
    ours = {node.name for node in ast.walk(ast.parse(ERRORS.read_text()))
            if isinstance(node, ast.ClassDef)}
    elsewhere = [f"{name}:{node.lineno} class {node.name}" for name, tree in _modules()
                 if name != "core/errors.py" for node in ast.walk(tree)
                 if isinstance(node, ast.ClassDef)
                 and any(_is_exception_name(base, ours) for base in _base_names(node))]
    assert not elsewhere, elsewhere


def _environment_reads(tree: ast.Module) -> Iterator[tuple[int, str]]:
    def is_environ(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ"
                and isinstance(node.value, ast.Name) and node.value.id == "os")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            reads = (func.attr == "get" and is_environ(func.value)) or (
                func.attr == "getenv" and isinstance(func.value, ast.Name)
                and func.value.id == "os")
            if reads and node.args:
                yield node.lineno, ast.unparse(node.args[0]).strip("'\"")
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
              and is_environ(node.value)):
            yield node.lineno, ast.unparse(node.slice).strip("'\"")


def test_environment_variables_are_read_only_in_core_settings() -> None:
    found = [f"{name}:{line} reads {variable}" for name, tree in _modules()
             if name != "core/settings.py" for line, variable in _environment_reads(tree)
             if (name, variable) not in ENVIRONMENT_PASSED_ON]
    assert not found, found


def test_the_check_sees_an_environment_read() -> None:
    tree = ast.parse("import os\nA = os.environ.get('X')\nB = os.getenv('Y')\n"
                     "C = os.environ['Z']\n")
    assert [variable for _, variable in _environment_reads(tree)] == ["X", "Y", "Z"]


def _private_typer_imports(tree: ast.Module) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "typer":
            names = [*node.module.split("."), *(alias.name for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [part for alias in node.names if alias.name.split(".")[0] == "typer"
                     for part in alias.name.split(".")]
        else:
            continue
        if any(name.startswith("_") for name in names):
            yield node.lineno


def test_no_private_module_of_typer_is_imported() -> None:
    private = [f"{name}:{line}" for name, tree in _modules()
               for line in _private_typer_imports(tree)]
    assert not private, private
    assert list(_private_typer_imports(ast.parse("from typer import _click as click\n"
                                                 "import typer._click\n"))) == [1, 2]
