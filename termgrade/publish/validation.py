"""The one place publishing asks whether a staged repo may go out.

:func:`check_staged_repo` is the single call site; the validator it calls is pluggable so
tests (and other repo kinds) can pass their own. The default delegates to the repo
validation library, ``termgrade.validate`` (``validate_repo(path)``), and adapts its
report; when that library is not installed, publishing is refused rather than unchecked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termgrade.core.errors import PublishError


@dataclass(frozen=True)
class ValidationOutcome:
    ok: bool
    problems: list[str] = field(default_factory=list)


Validator = Callable[[Path], ValidationOutcome]


def _adapt(report: Any) -> ValidationOutcome:
    """A report with ``ok`` and a list of findings / problems, or a bare list of problems."""
    if isinstance(report, ValidationOutcome):
        return report
    if isinstance(report, list | tuple):
        return ValidationOutcome(not report, [str(p) for p in report])
    names = ("findings", "problems", "errors", "issues")
    problems: list[Any] | tuple[Any, ...] = next(
        (getattr(report, n) for n in names if isinstance(getattr(report, n, None), list | tuple)),
        [])
    ok = getattr(report, "ok", None)
    ok = (not problems) if ok is None else bool(ok() if callable(ok) else ok)
    return ValidationOutcome(ok, [str(p) for p in problems])


def library_validator(root: Path) -> ValidationOutcome:
    """``termgrade.validate.validate_repo(root)``, adapted."""
    try:
        module = importlib.import_module("termgrade.validate")
    except ModuleNotFoundError as exc:
        if exc.name not in ("termgrade.validate",):
            raise
        return ValidationOutcome(False, ["the validation library termgrade.validate is not "
                                         "installed, so the repo cannot be checked"])
    return _adapt(module.validate_repo(root))


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
