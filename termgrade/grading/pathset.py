"""A set of directories, and the one question asked of it per path: is it one of them,
or inside one? (A set lookup and one ``startswith`` over a tuple.)"""

from __future__ import annotations


class PathSet:
    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self._exact = frozenset(roots)
        self._prefixes = tuple(root.rstrip("/") + "/" for root in roots)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and (path in self._exact or path.startswith(self._prefixes))

    def above(self, path: str) -> bool:
        """Is ``path`` a strict ancestor of one of the roots (deleting it deletes one)?"""
        prefix = path.rstrip("/") + "/"
        return any(root.startswith(prefix) for root in self.roots)


def under(path: str, roots: tuple[str, ...]) -> bool:
    return path in PathSet(roots)
