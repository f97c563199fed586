"""What caused a skip or xfail, as far as the tests' source says: the marks written there
(never one a hook or fixture added at run time) and whether a mark's condition is one the
platform alone decides (constants, ``sys``, ``platform``, ``os.name``), never the agent's
files, programs or environment.

Part of TermGrade's attestation plugin (:mod:`termgrade_attest`), staged into it as one file
(``attestation._source``): it reads no state of the plugin's (its one cache, the test
modules' parsed mark calls, is its own). Kept free of TermGrade imports and of syntax newer
than Python 3.8.
"""

from __future__ import annotations

import ast
from typing import Any


def _source_marks(item: Any) -> list[Any]:
    """The marks written in the tests' source: decorators, ``pytestmark`` of the module and
    classes, ``pytest.param(marks=...)``; never one a hook or fixture added at run time."""
    owners = [getattr(item, "obj", None), getattr(item, "module", None)]
    owners += list(getattr(getattr(item, "cls", None), "__mro__", ()))
    found: list[Any] = []
    for owner in owners:
        marks = (getattr(owner, "__dict__", {}) or {}).get("pytestmark", []) \
            if isinstance(owner, type) else getattr(owner, "pytestmark", [])
        found += marks if isinstance(marks, list) else [marks]
    found += list(getattr(getattr(item, "callspec", None), "marks", []) or [])
    return [getattr(mark, "mark", mark) for mark in found]


def _marked_by_source(item: Any, names: tuple[str, ...]) -> bool:
    """Every ``names`` mark the item carries is written in the tests' source."""
    carried = [m for name in names for m in item.iter_markers(name=name)]
    source = _source_marks(item)
    return bool(carried) and all(mark in source for mark in carried)


def _stash_get(item: Any, module: str, key: str) -> Any:
    """The item's stash entry under ``module.key`` (pytest's own key), or None where
    this pytest has no such key or stash."""
    try:
        found = getattr(__import__(module, fromlist=[key]), key)
        store = getattr(item, "stash", None) or getattr(item, "_store", None)
        return store.get(found, None) if store is not None else None
    except (ImportError, AttributeError, TypeError):
        return None


FIXED_ROOTS = ("sys", "platform")
"""Modules a skipif/xfail condition may read and still be fixed by the platform: the
interpreter and the machine, never a file, a command or the environment."""


def _fixed(node: Any) -> bool:
    """Is this condition expression decided by the platform alone (constants, ``sys``,
    ``platform``, ``os.name``), never by a file, a program or a variable the agent set?"""
    if isinstance(node, ast.Constant):  # a value (a string here is data, not code)
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_fixed(e) for e in node.elts)
    if isinstance(node, ast.Name):
        return node.id in FIXED_ROOTS
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "os":
            return node.attr == "name"
        return _fixed(node.value)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute) and _fixed(node.func) \
            and all(_fixed(a) for a in node.args) and all(_fixed(k.value) for k in node.keywords)
    if isinstance(node, ast.Subscript):
        index = getattr(node.slice, "value", node.slice)  # Python 3.8 wraps it in Index
        return _fixed(node.value) and _fixed(index)
    if isinstance(node, ast.Compare):
        return _fixed(node.left) and all(_fixed(c) for c in node.comparators)
    if isinstance(node, ast.BoolOp):
        return all(_fixed(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _fixed(node.operand)
    return False


def _fixed_text(text: str) -> bool:
    """A string condition (pytest evaluates it at run time): fixed when its expression is."""
    try:
        return _fixed(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return False


def _mark_calls(item: Any, name: str) -> list[Any]:
    """Every ``<...>.name(...)`` call written in the item's test module (decorators,
    ``pytestmark``, ``pytest.param(marks=...)``, a mark kept in a variable)."""
    where = str(getattr(getattr(item, "module", None), "__file__", "") or "")
    if (where, name) not in _MARK_CALLS:
        try:
            with open(where, encoding="utf-8") as handle:
                tree: Any = ast.parse(handle.read())
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            tree = None
        _MARK_CALLS[(where, name)] = [] if tree is None else [
            node for node in ast.walk(tree) if isinstance(node, ast.Call) and (
                getattr(node.func, "attr", None) == name
                or getattr(node.func, "id", None) == name)]
    return _MARK_CALLS[(where, name)]


_MARK_CALLS: dict[tuple[str, str], list[Any]] = {}
"""(test module, mark name) -> its calls, parsed once per session."""


def _fixed_conditions(item: Any, name: str) -> bool:
    """Every ``name`` (skipif, xfail) mark the item carries has a condition the agent's
    state cannot decide: none, a string whose expression is fixed (:func:`_fixed`), or a
    value computed in the source, judged by that source. The mark is found in the test
    module by its ``reason``; one not found there (imported from elsewhere, a reason
    built at run time) is not fixed."""
    for mark in item.iter_markers(name=name):
        conditions = list(mark.args) + ([mark.kwargs["condition"]]
                                        if "condition" in mark.kwargs else [])
        if all(isinstance(c, str) for c in conditions):
            if all(_fixed_text(c) for c in conditions):
                continue
            return False
        reason = mark.kwargs.get("reason")
        calls = [c for c in _mark_calls(item, name) if any(
            k.arg == "reason" and isinstance(k.value, ast.Constant) and k.value.value == reason
            for k in c.keywords)]
        written = [a for c in calls
                   for a in [*c.args, *(k.value for k in c.keywords if k.arg == "condition")]]
        if not calls or not all(_fixed_text(a.value) if isinstance(a, ast.Constant)
                                and isinstance(a.value, str) else _fixed(a) for a in written):
            return False
    return True
