"""Backtracking dependency resolution over a package index."""

from depsolve.constraint import Constraint
from depsolve.version import Version


class ResolutionError(Exception):
    """No assignment of versions satisfies every constraint."""


def _versions(index, name):
    return [Version.parse(v) for v in sorted(index.get(name, {}), reverse=True)]


def _deps(index, name, version):
    for text, deps in index[name].items():
        if Version.parse(text) == version:
            return [(dep, Constraint(c)) for dep, c in deps.items()]
    return []


def _search(index, decided, constraints):
    pending = sorted(n for n in constraints if n not in decided)
    if not pending:
        return decided
    name = pending[0]
    for candidate in _versions(index, name):
        if not all(c.allows(candidate) for c in constraints[name]):
            continue
        new_constraints = constraints
        for dep, c in _deps(index, name, candidate):
            new_constraints.setdefault(dep, []).append(c)
        new_decided = {**decided, name: candidate}
        if any(not all(c.allows(v) for c in new_constraints.get(n, [])) for n, v in new_decided.items()):
            continue
        found = _search(index, new_decided, new_constraints)
        if found is not None:
            return found
    return None


def resolve(index, requirements):
    """Pick one version per needed package.

    index: {name: {version: {dependency: constraint}}}; requirements: [(name, constraint)].
    Returns {name: Version}; raises ResolutionError when there is no solution.
    """
    constraints = {}
    for name, text in requirements:
        constraints.setdefault(name, []).append(Constraint(text))
    found = _search(index, {}, constraints)
    if found is None:
        raise ResolutionError("no solution for " + ", ".join(f"{n}@{t}" for n, t in requirements))
    return found
