#!/usr/bin/env bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path


def edit(path, old, new):
    p = Path(path)
    s = p.read_text()
    assert s.count(old) == 1, (path, old)
    p.write_text(s.replace(old, new))


V, C, R = "depsolve/version.py", "depsolve/constraint.py", "depsolve/resolver.py"
# Prerelease identifiers compare one by one (numeric < alphanumeric); build is ignored.
edit(V, '''        if not self.prerelease:
            pre = (1, "")
        else:
            pre = (0, ".".join(str(p) for p in self.prerelease))
        return (self.major, self.minor, self.patch, pre, self.build)''', '''        if not self.prerelease:
            pre = (1,)
        else:
            pre = (0, tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.prerelease))
        return (self.major, self.minor, self.patch, pre)''')
# Caret and tilde upper bounds.
edit(C, '''    if op in ("^", "~"):
        return [(">=", v), ("<", Version(v.major + 1, 0, 0))]''', '''    if op == "^":
        if v.major > 0:
            upper = Version(v.major + 1, 0, 0)
        elif v.minor > 0:
            upper = Version(0, v.minor + 1, 0)
        else:
            upper = Version(0, 0, v.patch + 1)
        return [(">=", v), ("<", upper)]
    if op == "~":
        return [(">=", v), ("<", Version(v.major, v.minor + 1, 0))]''')
# Any amount of whitespace between comparators.
edit(C, '''            tokens = part.strip().split(" ")''', '''            tokens = part.split()''')
edit(C, '''            if not tokens or tokens == [""]:''', '''            if not tokens:''')
# Prereleases only when a comparator of the range opts in on the same release.
edit(C, '''        return all(_OPS[op](version, bound) for op, bound in prims)''', '''        if not all(_OPS[op](version, bound) for op, bound in prims):
            return False
        if version.prerelease:
            return any(bound.prerelease and bound.release == version.release for _, bound in prims)
        return True''')
# Candidates by version precedence, not string order.
edit(R, '''    return [Version.parse(v) for v in sorted(index.get(name, {}), reverse=True)]''', '''    return sorted((Version.parse(v) for v in index.get(name, {})), reverse=True)''')
# Each branch works on its own copy of the constraints, so backtracking undoes them.
edit(R, '''        new_constraints = constraints''', '''        new_constraints = {n: list(cs) for n, cs in constraints.items()}''')
PY
