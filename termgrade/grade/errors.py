"""The errors grade/ raises: grading runs: incomplete, aborted, an unusable --reuse.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class GradeIncompleteError(TermGradeError, RuntimeError):
    """A grading run that finished without measuring what it was asked to: no trial was
    counted, or tasks were given up after repeated infrastructure losses."""


class GradeAborted(TermGradeError):
    """The endpoint refuses every request; finished trials are in the journal."""


class ReuseError(TermGradeError):
    """``grade --reuse`` names no earlier run, or the run being written itself."""


class RegradeIncompleteError(TermGradeError, RuntimeError):
    """A regrade left kept trials unscored (refused or lost), or could regrade nothing."""


class BuildFailedError(TermGradeError):
    """The task's Dockerfile fails a build step (the message is the step and its error)."""
