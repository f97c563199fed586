"""The errors publish/ raises: publishing: a refused or failed publish, a Hub parent that moved
(HTTP 412).

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class PublishError(TermGradeError, RuntimeError):
    """Publishing a staged repo to the Hub failed or was refused (names the repo and the fix)."""


class StaleParent(Exception):
    """The target moved since the plan was made (HTTP 412): re-plan and try again."""
