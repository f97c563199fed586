"""The errors builders/ raises: a dataset repo that cannot be built from its inputs.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class BuildError(TermGradeError, ValueError):
    """A dataset repo cannot be built from these inputs (names the record and the fix)."""
