"""The errors task/ raises: a task directory that cannot be loaded.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from pathlib import Path

from termgrade.core.errors import TermGradeError


class TaskLoadError(TermGradeError, ValueError):
    """A task directory is missing a file or has a malformed one."""

    def __init__(
        self, path: Path, message: str, *, field: str | None = None, fix: str | None = None
    ) -> None:
        self.path = path
        self.field = field
        where = f"{path}" + (f" [{field}]" if field else "")
        super().__init__(f"{where}: {message}", fix=fix)
