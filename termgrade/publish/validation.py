"""The one place publishing asks whether a staged repo may go out.

:func:`check_staged_repo` is the single call site; the validator it calls is pluggable so
tests (and other repo kinds) can pass their own. The default delegates to the repo
validation library, ``termgrade.validate`` (``validate_repo(path)``), and turns its
:class:`~termgrade.validate.ValidationReport` into a :class:`ValidationOutcome`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from termgrade.publish.errors import PublishError

if TYPE_CHECKING:
    from termgrade.validate import ValidationReport


@dataclass(frozen=True)
class ValidationOutcome:
    ok: bool
    problems: list[str] = field(default_factory=list)


Validator = Callable[[Path], ValidationOutcome]


def outcome_of(report: ValidationReport) -> ValidationOutcome:
    """What publishing needs of a :class:`~termgrade.validate.ValidationReport`: whether it
    passed, and each finding as the line ``termgrade validate`` prints."""
    return ValidationOutcome(report.ok, [str(finding) for finding in report.findings])


def library_validator(root: Path) -> ValidationOutcome:
    """``termgrade.validate.validate_repo(root)``, as a :class:`ValidationOutcome`."""
    from termgrade.validate import validate_repo  # its checks load datasets: import on use

    return outcome_of(validate_repo(root))


def check_staged_repo(root: Path, validator: Validator | None = None) -> ValidationOutcome:
    """Validate ``root``; raise :class:`PublishError` naming every problem when it fails."""
    outcome = (validator or library_validator)(root)
    if not outcome.ok:
        listed = "\n".join(f"  - {p}" for p in outcome.problems[:50]) or "  (no details)"
        more = len(outcome.problems) - 50
        raise PublishError(
            f"{root}: validation failed, nothing was published:\n{listed}"
            + (f"\n  ... and {more} more" if more > 0 else ""),
            fix=f"fix the problems and rerun `termgrade validate {root}` until it passes")
    return outcome
