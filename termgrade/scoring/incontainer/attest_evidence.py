"""A test report's evidence as the plugin signs it: bounded text, the failure message, the
short repr and what the test printed, each line below ``PIPE_BUF`` whatever the test printed.

Part of TermGrade's attestation plugin (:mod:`termgrade_attest`), staged into it as one file
(``attestation._source``): it reads no state of the plugin's. Kept free of TermGrade
imports and of syntax newer than Python 3.8.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

MAX_FIELD = 1000


def _text(value: object) -> str:
    """``value`` as text (bytes decoded as file names are), cut to ``MAX_FIELD``."""
    text = os.fsdecode(value) if isinstance(value, bytes) else str(value)
    return text[:MAX_FIELD]


MAX_IDS_JSON = 2500
"""Bytes of node ids in one ``deselected`` line (each line stays below PIPE_BUF)."""
MAX_MESSAGE = 300
MAX_REPR = 1200
MAX_OUTPUT = 600
MAX_EVENT = 3600
"""Evidence bounds: a report line stays below PIPE_BUF (4096) whatever the test printed."""


def _evidence(report: Any) -> dict[str, Any]:
    """Display evidence of one failed phase: duration, the failure message (pytest's
    ``reprcrash``), the short repr and what the test printed; bounded here, again on the host."""
    out: dict[str, Any] = {"dur": round(float(getattr(report, "duration", 0.0) or 0.0), 4)}
    if not report.failed:
        return out
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    message = getattr(crash, "message", None)
    out["msg"] = str(message if message is not None else report.longrepr)[:MAX_MESSAGE]
    with contextlib.suppress(AttributeError, TypeError, ValueError):
        out["repr"] = str(report.longreprtext)[-MAX_REPR:]
    printed = "".join(text for _, text in getattr(report, "sections", ()) or ()
                      if isinstance(text, str))
    if printed:
        out["out"] = printed[-MAX_OUTPUT:]
    return out
