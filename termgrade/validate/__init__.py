"""``termgrade validate DIR``: prove a staged dataset repo before it is published.

``validate_repo`` is imported on first use, so that a worker process importing one check
(:mod:`.secrets_check`, :mod:`.archive_check`) does not import every other check too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from termgrade.validate.report import Finding, ValidationReport

if TYPE_CHECKING:
    from termgrade.validate.repo import validate_repo

__all__ = ["Finding", "ValidationReport", "validate_repo"]


def __getattr__(name: str) -> Any:
    if name == "validate_repo":
        from termgrade.validate.repo import validate_repo

        return validate_repo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
