"""The errors and warnings of execution filtering's reference records
(:mod:`termgrade.verify.ensure`)."""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class ReferenceUnavailableError(TermGradeError):
    """A task has a reference solution but no record of it for its current content, and
    none could be made here."""


class ReferenceWarning(UserWarning):
    """A task is graded without a reference record (it has no solution, or the RL loop
    found none): its transfer set comes from the task's text alone."""
