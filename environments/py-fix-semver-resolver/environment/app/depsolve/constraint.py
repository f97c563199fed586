"""Version constraints: comparators, ^ and ~ ranges, AND (space) and OR (||)."""

import operator
import re

from depsolve.version import Version

_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "=": operator.eq}
_COMPARATOR = re.compile(r"^(\^|~|>=|<=|>|<|=)?(.+)$")


def _expand(token):
    """One comparator token -> list of (op, Version) primitives."""
    if token == "*":
        return []
    m = _COMPARATOR.match(token)
    op, v = m[1] or "=", Version.parse(m[2])
    if op in ("^", "~"):
        return [(">=", v), ("<", Version(v.major + 1, 0, 0))]
    return [(op, v)]


class Constraint:
    """A parsed constraint string; ``allows(version)`` tests a Version."""

    def __init__(self, text):
        self.text = text
        self.alternatives = []
        for part in text.split("||"):
            tokens = part.strip().split(" ")
            if not tokens or tokens == [""]:
                raise ValueError(f"empty range in constraint {text!r}")
            prims = []
            for token in tokens:
                prims.extend(_expand(token))
            self.alternatives.append(prims)

    @staticmethod
    def _set_allows(prims, version):
        return all(_OPS[op](version, bound) for op, bound in prims)

    def allows(self, version):
        return any(self._set_allows(prims, version) for prims in self.alternatives)

    def __repr__(self):
        return f"Constraint({self.text!r})"
