"""Static reading of pytest files with :mod:`ast`: which tests exist and which are skipped.

Counted as tests, as pytest collects them by default: functions named ``test*`` at module
level, and methods named ``test*`` of classes named ``Test*``. A function's *cases* are
the product of the lengths of its ``@pytest.mark.parametrize`` value lists; a list that is
not a literal (nor a module-level name bound to one) counts as one case and makes the
count approximate. Fixture ``params`` are not expanded.

Skipped, without running anything: a ``pytestmark`` (module or class) or decorator that
is ``skip`` / ``unittest.skip`` or ``skipif`` with a constant-true condition, a
module-level ``pytest.skip(...)`` call or ``raise SkipTest``, and a test whose body
starts with ``pytest.skip(...)``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeGuard

from termgrade.audit.documents import SourceFile
from termgrade.core.pyparse import parse


@dataclass(frozen=True)
class TestFunction:
    __test__ = False  # a record, not a pytest test class
    name: str
    cases: int
    skipped: bool
    exact: bool = True
    """False when a parametrize list could not be sized statically."""


@dataclass(frozen=True)
class TestInventory:
    __test__ = False  # a record, not a pytest test class
    functions: tuple[TestFunction, ...] = ()
    errors: tuple[str, ...] = ()
    """Files that do not parse: ``path: message``."""

    @property
    def n_functions(self) -> int:
        return len(self.functions)

    @property
    def n_cases(self) -> int:
        return sum(f.cases for f in self.functions)

    @property
    def exact(self) -> bool:
        return all(f.exact for f in self.functions)

    @property
    def all_skipped(self) -> bool:
        return bool(self.functions) and all(f.skipped for f in self.functions)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _constant_true(node: ast.expr) -> bool:
    try:
        value = ast.literal_eval(node)
        if isinstance(value, str):
            value = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return bool(value)


def is_skip_mark(node: ast.expr) -> bool:
    """``pytest.mark.skip``, ``unittest.skip(...)``, or ``skipif`` with a true constant."""
    name = _dotted(node)
    last = name.rsplit(".", 1)[-1]
    if last == "skip":
        return "mark" in name.split(".") or name.startswith("unittest")
    if last == "skipif" and isinstance(node, ast.Call):
        conditions = list(node.args[:1]) + [k.value for k in node.keywords
                                            if k.arg == "condition"]
        return any(_constant_true(c) for c in conditions)
    return False


def _marks(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.List | ast.Tuple) else [node]


def _pytestmark_skips(body: Iterable[ast.stmt]) -> bool:
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
            return any(is_skip_mark(mark) for mark in _marks(stmt.value))
    return False


def _skip_statement(stmt: ast.stmt) -> bool:
    """``pytest.skip(...)`` / ``skip(...)`` as a statement, or ``raise ...SkipTest``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return _dotted(stmt.value.func) in {"pytest.skip", "skip"}
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        return _dotted(stmt.exc).endswith("SkipTest")
    return False


def _first_statement(body: list[ast.stmt]) -> ast.stmt | None:
    for stmt in body:
        docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        if not docstring:
            return stmt
    return None


def _literal_lengths(tree: ast.Module) -> dict[str, int]:
    lengths = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List | ast.Tuple)
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            lengths[stmt.targets[0].id] = len(stmt.value.elts)
    return lengths


def _cases(func: ast.FunctionDef | ast.AsyncFunctionDef, names: dict[str, int]) -> tuple[int, bool]:
    cases, exact = 1, True
    for decorator in func.decorator_list:
        if not (isinstance(decorator, ast.Call)
                and _dotted(decorator).endswith("mark.parametrize")):
            continue
        values = decorator.args[1] if len(decorator.args) > 1 else next(
            (k.value for k in decorator.keywords if k.arg == "argvalues"), None)
        if isinstance(values, ast.List | ast.Tuple | ast.Set):
            cases *= len(values.elts)
        elif isinstance(values, ast.Name) and values.id in names:
            cases *= names[values.id]
        else:
            exact = False
    return cases, exact


def _function(func: ast.FunctionDef | ast.AsyncFunctionDef, inherited_skip: bool,
              names: dict[str, int]) -> TestFunction:
    first = _first_statement(func.body)
    skipped = (inherited_skip or any(is_skip_mark(d) for d in func.decorator_list)
               or (first is not None and _skip_statement(first)))
    cases, exact = _cases(func, names)
    return TestFunction(func.name, cases, skipped, exact)


_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _is_test(node: ast.stmt) -> TypeGuard[_Def]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def inventory_module(source: str, path: str = "<test>") -> TestInventory:
    """The tests of one pytest file, or the parse error."""
    try:
        tree = parse(source, path)
    except SyntaxError as exc:
        return TestInventory(errors=(f"{path}: {exc.msg} (line {exc.lineno})",))
    names = _literal_lengths(tree)
    module_skip = _pytestmark_skips(tree.body) or any(_skip_statement(s) for s in tree.body)
    found: list[TestFunction] = []
    for node in tree.body:
        if _is_test(node):
            found.append(_function(node, module_skip, names))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            class_skip = (module_skip or _pytestmark_skips(node.body)
                          or any(is_skip_mark(d) for d in node.decorator_list))
            for item in node.body:
                if _is_test(item):
                    found.append(_function(item, class_skip, names))
    return TestInventory(functions=tuple(found))


def is_test_file(path: str) -> bool:
    """pytest's default ``python_files``: ``test_*.py`` or ``*_test.py``."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def inventory(sources: Iterable[SourceFile]) -> TestInventory:
    """The tests of every pytest file among ``sources`` (others are ignored)."""
    functions: list[TestFunction] = []
    errors: list[str] = []
    for source in sources:
        if is_test_file(source.path):
            one = inventory_module(source.text, source.path)
            functions.extend(one.functions)
            errors.extend(one.errors)
    return TestInventory(functions=tuple(functions), errors=tuple(errors))
