"""The errors pools/ raises: executors: no Ray cluster.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class RayUnavailableError(TermGradeError, ConnectionError):
    """No Ray cluster answers at the address, or its nodes cannot run trials."""
