"""Text kept within a size: the head and the tail, and a line saying what was cut."""

from __future__ import annotations


def head_and_tail(text: str, limit: int, hint: str = "") -> str:
    """``text`` if it has at most ``limit`` characters; otherwise its first and last
    ``limit // 2`` with a notice between them of how much was omitted (and ``hint``)."""
    if len(text) <= limit:
        return text
    half = max(1, limit // 2)
    cut = len(text) - 2 * half
    notice = f"[output truncated: {cut} of {len(text)} characters omitted{hint}]"
    return f"{text[:half]}\n{notice}\n{text[-half:]}"
