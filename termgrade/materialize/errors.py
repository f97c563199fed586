"""The errors materialize/ raises: a dataset row that cannot (safely) become a task directory.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class MaterializeError(TermGradeError, ValueError):
    """A dataset row cannot be turned back into a task directory."""


class UnsafeArchiveError(MaterializeError):
    """A task archive tries to write outside its directory, holds links or devices, or is a
    bomb; nothing was written."""
