"""The errors generate/ raises: task generation: a model answer that is not a well-formed task.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class AnswerError(TermGradeError, ValueError):
    """The model's answer is not a well-formed generated task (the reason is fed back)."""
