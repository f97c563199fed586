"""The errors validate/ raises: validation: a secrets review with nothing to review, a regex
with no RE2 superset.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class SecretsReviewError(TermGradeError, ValueError):
    """``termgrade secrets review``: no repo there, or a baseline it cannot read."""


class Untranslatable(ValueError):
    """A Python regex construct with no RE2 superset here."""
