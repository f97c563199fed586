"""The errors labels/ raises: labels: trials of one task graded at different versions.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import RecordError


class MixedDigestsError(RecordError):
    """One task's trials graded different versions of its files (``labels --mix-digests``)."""
