"""The errors sandbox/ raises: containers and images: no engine, a failed build, a failed
container operation, a layer too large to review.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class EngineUnavailableError(TermGradeError, ConnectionError):
    """No Docker engine answers."""


class ImageBuildError(TermGradeError, RuntimeError):
    """`docker build` of a task or the base image failed."""

    def __init__(self, image: str, log_tail: str, *, fix: str | None = None) -> None:
        self.image = image
        self.log_tail = log_tail
        super().__init__(f"building image {image} failed:\n{log_tail}", fix=fix)


class MissingImageError(ImageBuildError):
    """A task's Dockerfile starts FROM an image that is neither here nor pullable."""

    def __init__(self, image: str, missing: str, reason: str, *, fix: str | None = None) -> None:
        self.image = image
        self.missing = missing
        self.log_tail = ""
        TermGradeError.__init__(
            self, f"FROM {missing}: the image is not on this machine and could not be pulled "
            f"({reason}), so {image} was not built", fix=fix)


class SandboxError(TermGradeError, RuntimeError):
    """A container operation (start, exec, copy) failed for infrastructure reasons."""


class DiffTooLargeError(Exception):
    """The writable layer holds more entries than
    :data:`~termgrade.sandbox.overlay_diff.MAX_ENTRIES`."""
