"""The errors view/ raises: the run viewer: no page at a path (404).

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations


class PageNotFound(LookupError):
    """``termgrade view``: no page at this path (the server answers 404)."""
