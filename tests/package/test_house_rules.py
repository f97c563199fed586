"""Promises the package keeps about where things live: every exception class in an
``errors.py`` (``termgrade/core/errors.py`` for the errors that cross floors, a floor's own
``errors.py`` for the rest), every environment variable read in
``termgrade/core/settings.py``, no private module of a dependency imported.

The code run inside containers (no TermGrade there) is outside these rules."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "termgrade"
IN_CONTAINERS = (PACKAGE / "scoring" / "incontainer", PACKAGE / "attacks" / "scripts")
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


def _is_errors_module(name: str) -> bool:
    """``core/errors.py`` or a floor's own ``<floor>/errors.py`` (one level down)."""
    parts = name.split("/")
    return len(parts) == 2 and parts[1] == "errors.py"


def _classes(name: str, tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def test_every_exception_class_is_defined_in_an_errors_module() -> None:
    modules = dict(_modules())
    ours = {cls for name, tree in modules.items() if _is_errors_module(name)
            for cls in _classes(name, tree)}
    elsewhere = [f"{name}:{node.lineno} class {node.name}" for name, tree in modules.items()
                 if not _is_errors_module(name) for node in ast.walk(tree)
                 if isinstance(node, ast.ClassDef)
                 and any(_is_exception_name(base, ours) for base in _base_names(node))]
    assert not elsewhere, elsewhere
    not_errors = [f"{name} class {cls}" for name, tree in modules.items()
                  if _is_errors_module(name) for cls, node in _classes(name, tree).items()
                  if not any(_is_exception_name(base, ours) for base in _base_names(node))]
    assert not not_errors, not_errors


def _floors_naming(modules: dict[str, ast.Module], cls: str) -> set[str]:
    """The floors (top folders) other than core whose modules use the name ``cls``."""
    return {name.split("/")[0] for name, tree in modules.items()
            if "/" in name and not name.startswith("core/") for node in ast.walk(tree)
            if isinstance(node, ast.Name | ast.alias)
            and (node.id if isinstance(node, ast.Name) else node.name) == cls}


def test_core_errors_holds_only_what_crosses_floors() -> None:
    """An error one floor alone raises and catches belongs in that floor's errors.py."""
    modules = dict(_modules())
    core = _classes("core/errors.py", modules["core/errors.py"])
    lonely = {cls: sorted(floors) for cls in core
              if len(floors := _floors_naming(modules, cls)) < 2}
    assert lonely == {}, lonely
    # the check can fail: a stage's own error is named by its floor only
    assert _floors_naming(modules, "PublishError") == {"publish"}


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
