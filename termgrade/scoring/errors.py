"""The errors scoring/ raises: the grader: a verifier with no usable reward, a review past its
budget, work that cannot be carried, kept work that is not what was kept.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class VerifierError(TermGradeError, RuntimeError):
    """The verifier crashed, timed out, or wrote no usable reward."""


class IntegrityBudgetError(Exception):
    """The review ran past its time budget."""


class CarryError(OSError):
    """The agent's work could not be written into the scoring container's layer."""


class KeptWorkError(TermGradeError, ValueError):
    """A trial's kept work cannot be rebuilt as it was kept: a blob missing or not the bytes
    its manifest names (a hash mismatch), or a manifest entry that would write outside the
    layer."""
