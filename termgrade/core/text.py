"""Text kept within a size: the head and the tail, and a line saying what was cut."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour and cursor codes (as a build log carries)."""
    return _ANSI.sub("", text)


def brief(text: str, lines: int = 2) -> str:
    """One line: ``text``'s first line and, when it has more, its last ``lines`` non-empty
    lines (where a log says what finally failed), colour codes removed."""
    kept = [line.strip() for line in strip_ansi(text).splitlines() if line.strip()]
    if len(kept) <= lines + 1:
        return " ".join(kept)
    return " ".join([kept[0], "...", *kept[-lines:]])


def head_and_tail(text: str, limit: int, hint: str = "") -> str:
    """``text`` if it has at most ``limit`` characters; otherwise its first and last
    ``limit // 2`` with a notice between them of how much was omitted (and ``hint``)."""
    if len(text) <= limit:
        return text
    half = max(1, limit // 2)
    cut = len(text) - 2 * half
    notice = f"[output truncated: {cut} of {len(text)} characters omitted{hint}]"
    return f"{text[:half]}\n{notice}\n{text[-half:]}"
