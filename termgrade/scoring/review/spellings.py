"""Paths a task's text names however it spells them: relative to the working directory
(``data/numbers.txt`` in the instruction), or built in a test from constants (``APP /
"data" / "numbers.txt"`` with ``APP = Path("/app")``, ``os.path.join(ROOT, "in.csv")``).

A cold attack (round 9) rewrote an input in the working directory that the instruction
named relatively and the tests built from parts: only literal absolute paths were names,
so the file was "the working directory's" (asked for) even with a recorded reference that
left it as it was. The transfer set (:mod:`termgrade.scoring.review.transfer`) reads
these spellings as it reads absolute ones; it keeps only paths the image has.
"""

from __future__ import annotations

import ast
import posixpath
import re
from functools import lru_cache

from termgrade.core.pyparse import parse

__all__ = ["built_paths", "relative_names"]

_RELATIVE = re.compile(
    r"(?<![\w./~$@%:-])((?:\./)?[A-Za-z0-9_][A-Za-z0-9_+-]*(?:\.[A-Za-z0-9_+-]+)*"
    r"(?:/[A-Za-z0-9_][A-Za-z0-9._+-]*)*/?)(?![\w/]|\.\w)")
_FILE_LIKE = re.compile(r"(?:^|/)[^/]*\.[A-Za-z][A-Za-z0-9]{0,7}$")
MAX_NAMES = 2000
"""Spellings read from one text, at most (the caller looks each up in the image)."""


def relative_names(text: str) -> list[str]:
    """Relative paths ``text`` names, as written (no leading ``/``), in order, without
    duplicates: a word with a ``/`` in it (``data/numbers.txt``, ``src/app``) or a file
    name with an extension (``numbers.txt``); never a part of an absolute path, a URL or
    an option. The caller resolves each against the working directory. Read once per text
    (trials of one task share it)."""
    return list(_relative_names(text))


@lru_cache(maxsize=64)
def _relative_names(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for match in _RELATIVE.finditer(text):
        word = match.group(1).removeprefix("./").rstrip(".")
        if not word or word.startswith("..") or "//" in word:
            continue
        if "/" in word or _FILE_LIKE.search(word):
            found.setdefault(posixpath.normpath(word), None)
            if len(found) >= MAX_NAMES:
                break
    return tuple(found)


_PATH_CALLS = frozenset({"Path", "PurePath", "PosixPath", "PurePosixPath"})
_JOIN_CALLS = frozenset({"join"})  # os.path.join, posixpath.join


def built_paths(source: str) -> list[str]:
    """Absolute paths a Python test builds from string constants: names bound (anywhere
    in the module) to a constant path, joined by ``/``, ``os.path.join``,
    ``.joinpath`` or an f-string whose parts are all known. An expression with an unknown
    part names nothing. A file that does not parse names nothing. Read once per text
    (trials of one task share it)."""
    return list(_built_paths(source))


@lru_cache(maxsize=64)
def _built_paths(source: str) -> tuple[str, ...]:
    try:
        tree = parse(source, "<tests>")
    except (SyntaxError, ValueError, RecursionError):
        return ()
    bound: dict[str, str] = {}
    for _ in range(3):  # names bound to names bound to constants, a few levels deep
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                value = _fold(node.value, bound)
                if value is not None:
                    bound.setdefault(node.targets[0].id, value)
    found: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp | ast.Call | ast.JoinedStr):
            value = _fold(node, bound)
            if value is not None and value.startswith("/") and not value.startswith("//"):
                found.setdefault(posixpath.normpath(value), None)
                if len(found) >= MAX_NAMES:
                    break
    return tuple(found)


def _fold(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The string (a path) ``node`` evaluates to from constants alone, or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _fold(node.left, bound), _fold(node.right, bound)
        return posixpath.join(left, right) if left is not None and right is not None \
            else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                value = _fold(part.value, bound)
                if value is None:
                    return None
                parts.append(value)
            else:
                return None
        return "".join(parts)
    if isinstance(node, ast.Call):
        return _fold_call(node, bound)
    return None


def _fold_call(node: ast.Call, bound: dict[str, str]) -> str | None:
    if node.keywords:
        return None
    args = [_fold(arg, bound) for arg in node.args]
    if any(arg is None for arg in args):
        return None
    parts = [arg for arg in args if arg is not None]
    func = node.func
    name = func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else None
    if name in _PATH_CALLS or (name in _JOIN_CALLS and isinstance(func, ast.Attribute)
                               and _is_path_module(func.value)):
        return posixpath.join(*parts) if parts else None
    if name == "joinpath" and isinstance(func, ast.Attribute):
        base = _fold(func.value, bound)
        return posixpath.join(base, *parts) if base is not None else None
    return None


def _is_path_module(node: ast.expr) -> bool:
    """``os.path``, ``posixpath`` or ``path`` (``from os import path``)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "path" and isinstance(node.value, ast.Name) \
            and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id in ("posixpath", "path")
