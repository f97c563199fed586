"""Parsing Python source, one parse at a time in this process.

CPython 3.11's parser is not safe to run from two threads at once: grading and regrading
audit tasks on worker threads, and the transfer set reads the tests' paths in every trial;
two concurrent ``ast.parse`` calls were seen to raise ``SystemError`` ("AST constructor
recursion depth mismatch"). Every parse of the package goes through :func:`parse`.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str) -> ast.Module:
    """``ast.parse(source, filename)`` under this process's parse lock (SyntaxError,
    ValueError as ``ast.parse`` raises them)."""
    with _LOCK:
        return ast.parse(source, filename=filename)
