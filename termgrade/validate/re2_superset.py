"""A Python regex as an RE2 regex that matches at least every line it matches, so that
Arrow (``pyarrow.compute.match_substring_regex``, RE2 in C++) can drop, in bulk, the
lines no plugin's pattern can match before Python's ``re`` looks at the rest.

Read from the pattern by ``re``'s own parser. Zero-width assertions (anchors, word
boundaries, lookarounds) are dropped and backreferences become "anything": each only
ever makes the RE2 pattern match more. Python's Unicode classes are spelled out (``\\d``
is ``\\p{Nd}``, ``\\w`` is ``[\\p{L}\\p{N}_]``, ``\\s`` is every character ``str.isspace``
accepts); a pattern with a construct not known here raises :class:`Untranslatable`, and
its caller then keeps every line.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from termgrade.validate.errors import Untranslatable

_SPACE = r"\s\x{0b}\x{1c}-\x{1f}\x{85}\p{Z}"
_WORD = r"\p{L}\p{N}_"
_IN_CLASS = {C.CATEGORY_DIGIT: r"\p{Nd}", C.CATEGORY_NOT_DIGIT: r"\P{Nd}",
             C.CATEGORY_WORD: _WORD, C.CATEGORY_SPACE: _SPACE}
_ALONE = {C.CATEGORY_DIGIT: r"\p{Nd}", C.CATEGORY_NOT_DIGIT: r"\P{Nd}",
          C.CATEGORY_WORD: f"[{_WORD}]", C.CATEGORY_NOT_WORD: f"[^{_WORD}]",
          C.CATEGORY_SPACE: f"[{_SPACE}]", C.CATEGORY_NOT_SPACE: f"[^{_SPACE}]"}
_DOTLESS = r"\x{130}\x{131}"
"""What ASCII-lowering (:data:`.secrets_scan._ASCII_LOWER`) maps to ``i`` beyond RE2's
case folding."""
_RE2_MAX_REPEAT = 1000


def _char(code: int) -> str:
    return f"\\x{{{code:x}}}"


def _covers_i(items: list[tuple[Any, Any]]) -> bool:
    for op, av in items:
        if op is C.LITERAL and chr(av) in "iI":
            return True
        if op is C.RANGE and (av[0] <= ord("i") <= av[1] or av[0] <= ord("I") <= av[1]):
            return True
    return False


def _klass(items: list[tuple[Any, Any]], lowered: bool) -> str:
    negated = bool(items) and items[0][0] is C.NEGATE
    body = []
    for op, av in items[1:] if negated else items:
        if op is C.LITERAL:
            body.append(_char(av))
        elif op is C.RANGE:
            body.append(f"{_char(av[0])}-{_char(av[1])}")
        elif op is C.CATEGORY and av in _IN_CLASS:
            body.append(_IN_CLASS[av])
        elif op is C.CATEGORY and not negated:
            body.append(r"\x{0}-\x{10ffff}")  # a complement in a union: anything
        else:
            raise Untranslatable(f"{op} {av} in a character class")
    if lowered and not negated and _covers_i(items):
        body.append(_DOTLESS)
    return ("[^" if negated else "[") + "".join(body) + "]"


def _sequence(parsed: Any, lowered: bool, dotall: bool) -> str:
    return "".join(_item(op, av, lowered, dotall) for op, av in parsed)


def _item(op: Any, av: Any, lowered: bool, dotall: bool) -> str:
    if op is C.LITERAL:
        if lowered and chr(av) in "iI":
            return f"[iI{_DOTLESS}]"
        return _char(av)
    if op is C.NOT_LITERAL:
        return f"[^{_char(av)}]"
    if op is C.ANY:
        return "(?s:.)" if dotall else "."
    if op is C.IN:
        return _klass(list(av), lowered)
    if op is C.CATEGORY:
        if av not in _ALONE:
            raise Untranslatable(f"category {av}")
        return _ALONE[av]
    if op is C.BRANCH:
        return "(?:" + "|".join(_sequence(b, lowered, dotall) for b in av[1]) + ")"
    if op is C.SUBPATTERN:
        _, add, _, inner = av
        text = _sequence(inner, lowered, dotall or bool(add & re.DOTALL))
        return f"(?i:{text})" if add & re.IGNORECASE else f"(?:{text})"
    if op is C.ATOMIC_GROUP:
        return f"(?:{_sequence(av, lowered, dotall)})"
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, high, inner = av
        if low > _RE2_MAX_REPEAT:
            raise Untranslatable(f"repeat of {low}")
        top = "" if high is C.MAXREPEAT or high > _RE2_MAX_REPEAT else str(high)
        return f"(?:{_sequence(inner, lowered, dotall)}){{{low},{top}}}"
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return ""  # zero-width: without it the pattern matches more
    if op is C.GROUPREF:
        return "(?s:.)*"
    raise Untranslatable(f"{op}")


def re2_superset(pattern: re.Pattern[str], *, lowered: bool = False) -> str:
    """An RE2 pattern that matches every line ``pattern`` matches (on the line as it is,
    or, with ``lowered``, on the line ASCII-lowered)."""
    parsed = _parser.parse(pattern.pattern, pattern.flags)
    text = _sequence(parsed, lowered, bool(pattern.flags & re.DOTALL))
    if lowered or pattern.flags & re.IGNORECASE:
        text = f"(?i:{text})"
    return text
