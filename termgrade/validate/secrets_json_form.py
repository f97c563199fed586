"""A cell's text as the JSON string a trace or JSONL file holds it, scanned too.

A trajectories repo ships the same text twice: in its parquet cells (``sft``,
``episodes``, ``traces``), where each is scanned as a file holding it, and in its Hub trace
files (``traces/train/<task>/<trial>.jsonl``), where it is a JSON string on one line. The
entropy plugins score quoted runs of their characters, and their Base64 alphabet holds the
backslash: ``"wJalr...Pa\\n"`` (a key ``cat`` printed, a line of its own) is a quoted run
in the trace, while the cell's ``wJalr...Pa`` followed by a newline is not quoted at all.
The trace file was flagged and the cells of the same text passed.

So a cell is also scanned in that form: its text as ``json.dumps`` writes it (as the
trace writer does, ``ensure_ascii=False``), one line, read as detect-secrets reads a
trace line (raw lines: a trace file never reads as INI). Each finding is placed on the
line of the cell where its value starts (past the line breaks it opens with). Only what
the cell's own scan did not find on that line (same type) is added: one prompt per line
and type, not two.
"""

from __future__ import annotations

import bisect
import json
from functools import lru_cache
from typing import Any

MIN_RUN = 3
"""The shortest text segment whose JSON form can pass an entropy limit: the hex
plugin needs 9 distinct characters, and a character of the text is at most 3 of the JSON
form (``\\``, ``u``, ``0`` shared by every escape, two more its own)."""


@lru_cache(maxsize=1)
def json_run_prefilter() -> str | None:
    """An RE2 pattern that matches every text whose JSON form may hold a quoted run an
    entropy plugin scores: a segment between two quotes (or a quote and an end of the
    text) of characters that stay in, or escape into, the plugins' alphabets. None
    when no entropy plugin is on."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.settings import get_plugins

    chars = {c for p in get_plugins() if isinstance(p, HighEntropyStringsPlugin)
             for c in p.charset}
    if not chars:
        return None
    escaped = "".join("\\" + c if c in "\\-]^[" else c for c in sorted(chars))
    return rf'(?:\A|")[{escaped}\x00-\x1f]{{{MIN_RUN},}}(?:"|\z)'


def json_form(text: str) -> tuple[str, list[int]]:
    """The text as one JSON string, and where each of its ``\\n``-separated lines
    starts in it."""
    parts = [json.dumps(line, ensure_ascii=False)[1:-1] for line in text.split("\n")]
    starts, at = [], 1
    for part in parts:
        starts.append(at)
        at += len(part) + 2  # the part, then its "\n" escape
    return '"' + "\\n".join(parts) + '"', starts


def json_form_findings(text: str, filename: str) -> list[tuple[int, Any]]:
    """``(1-based line of the text, PotentialSecret)`` of each detect-secrets finding in
    the text's JSON form, scanned as a line of a file named ``filename`` (a cell's:
    :data:`.cell_secrets.CELL_NAME`; call inside ``default_settings()``)."""
    from termgrade.validate.secrets_scan import _scan_lines

    form, starts = json_form(text)
    out = []
    for secret in _scan_lines([form], filename):
        value = secret.secret_value or ""
        at = max(form.find(value), 0)
        while form.startswith("\\n", at) and value.startswith("\\n"):  # line breaks first
            at, value = at + 2, value[2:]
        out.append((bisect.bisect_right(starts, at), secret))
    return out
