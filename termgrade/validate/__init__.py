"""``termgrade validate DIR``: prove a staged dataset repo before it is published."""

from termgrade.validate.repo import validate_repo
from termgrade.validate.report import Finding, ValidationReport

__all__ = ["Finding", "ValidationReport", "validate_repo"]
