"""The errors ingest/ raises: Harbor job output that cannot be ingested, a trial skipped.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class IngestError(TermGradeError, ValueError):
    """Harbor (or other) trial output cannot be ingested: nothing found, or no output path."""

    def __init__(self, path: str, message: str, *, fix: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}", fix=fix)


class TrialSkippedError(IngestError):
    """One trial folder is incomplete (no result.json) or malformed; ingestion skips it."""

    def __init__(self, path: str, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(path, reason)
