"""``termgrade validate DIR``: prove a staged dataset repo before it is published.

``validate_repo`` is imported on first use, so that a worker process importing one check
(:mod:`.secrets_check`, :mod:`.archive_check`) does not import every other check too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termgrade.core.lazy import lazy_exports
from termgrade.validate.findings import ValidationFinding, ValidationReport

_API = {"validate_repo": "termgrade.validate.repo"}

__all__ = ["ValidationFinding", "ValidationReport", "validate_repo"]

__getattr__ = lazy_exports(__name__, _API)

if TYPE_CHECKING:
    from termgrade.validate.repo import validate_repo
