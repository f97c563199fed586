"""depsolve: semantic versions, version constraints and a dependency resolver."""

from depsolve.constraint import Constraint
from depsolve.resolver import ResolutionError, resolve
from depsolve.version import Version

__all__ = ["Constraint", "ResolutionError", "Version", "resolve"]
