"""The strings every match of a regular expression must hold, read from its parsed form.

A substring test (``needle in text``) runs at memory speed; a regex pass over the same text
is far slower. So a pattern need not be run on a text that holds none of the strings every
match of it must hold: :func:`required_literals` finds such strings with ``re``'s own
parser, so nothing is guessed from the pattern's source text.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from typing import Any

MIN_NEEDLE = 3
"""Shorter required strings are in too many texts to be worth looking for."""


@cache
def required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Strings at least one of which every match of ``pattern`` holds, read from its
    parsed form (``re``'s own parser), or None when no such set of strings of
    :data:`MIN_NEEDLE` or more ASCII characters is found. For an IGNORECASE pattern they
    are lowercase, to be looked for in text lowered as IGNORECASE folds it to ASCII
    (:data:`termgrade.validate.secrets_scan._ASCII_LOWER`)."""
    parser: Any = importlib.import_module("re._parser")
    ops: Any = importlib.import_module("re._constants")
    repeats = {ops.MAX_REPEAT, ops.MIN_REPEAT, getattr(ops, "POSSESSIVE_REPEAT", ops.MAX_REPEAT)}
    fold = bool(pattern.flags & re.IGNORECASE)

    def better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
        if a is None or b is None:
            return a if b is None else b
        return max(a, b, key=lambda s: (min(map(len, s)), -len(s)))

    def plain(op: Any, arg: Any) -> list[str] | None:
        """The strings a character, a class of a few characters, or alternatives of
        plain strings can match; None for anything else."""
        if op is ops.LITERAL:
            return [chr(arg)]
        if op is ops.IN and len(arg) <= 8 and all(o is ops.LITERAL for o, _ in arg):
            return [chr(code) for _, code in arg]
        if op is ops.BRANCH and all(all(o is ops.LITERAL for o, _ in branch)
                                    for branch in arg[1]):
            return ["".join(chr(code) for _, code in branch) for branch in arg[1]]
        return None

    def sequence(items: Any) -> frozenset[str] | None:
        best: frozenset[str] | None = None
        run: set[str] = {""}  # the strings a run of plain characters can be
        for op, arg in [*items, (None, None)]:
            choices = plain(op, arg) if op is not None else None
            if choices is not None and len(run) * len(choices) <= 64:
                run = {head + c for head in run for c in choices}
                continue
            if run != {""}:
                best = better(best, frozenset(run))
                run = {""}
            if choices is not None:
                continue
            found: frozenset[str] | None = None
            if op is ops.BRANCH:
                branches = [sequence(branch) for branch in arg[1]]
                if all(b is not None for b in branches):
                    found = frozenset().union(*branches)  # type: ignore[arg-type]
            elif op in repeats and arg[0] >= 1:
                found = sequence(arg[2])
            elif op is ops.SUBPATTERN and not (arg[1] or arg[2]):  # no local flags
                found = sequence(arg[3])
            best = better(best, found)
        return best

    found = sequence(parser.parse(pattern.pattern, pattern.flags).data)
    if not found or min(map(len, found)) < MIN_NEEDLE or not all(s.isascii() for s in found):
        return None
    return tuple(sorted(s.lower() if fold else s for s in found))
