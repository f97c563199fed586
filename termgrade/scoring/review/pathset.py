"""A set of directories, and the one question asked of it per path: is it one of them,
or inside one? (A set lookup and one ``startswith`` over a tuple.)"""

from __future__ import annotations


class PathSet:
    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self.exact = frozenset(roots)
        """The roots themselves (a path inside none of them is in the set only if it is
        one of these)."""
        self._prefixes = tuple(root.rstrip("/") + "/" for root in roots)
        self._ancestors = frozenset(
            parent for root in roots
            for parent in _ancestors(root.rstrip("/")))

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and (path in self.exact or path.startswith(self._prefixes))

    def above(self, path: str) -> bool:
        """Is ``path`` a strict ancestor of one of the roots (deleting it deletes one)?"""
        return (path.rstrip("/") or "/") in self._ancestors


def _ancestors(path: str) -> list[str]:
    found = []
    while path not in ("", "/"):
        path = path.rsplit("/", 1)[0] or "/"
        found.append(path)
    return found


def under(path: str, roots: tuple[str, ...]) -> bool:
    return path in PathSet(roots)


class MarkedDirs:
    """Directories marked one by one; is a path below one? Memoised per directory: the
    paths asked come parents first (a layer walk), so a mark never lands above a path
    already answered."""

    def __init__(self) -> None:
        self._marked: set[str] = set()
        self._inside: dict[str, bool] = {}

    def add(self, path: str) -> None:
        self._marked.add(path)

    def __len__(self) -> int:
        return len(self._marked)

    def below(self, path: str) -> bool:
        chain = []
        parent = path.rpartition("/")[0] or "/"
        while parent not in ("", "/") and parent not in self._inside \
                and parent not in self._marked:
            chain.append(parent)
            parent = parent.rpartition("/")[0] or "/"
        answer = parent in self._marked or self._inside.get(parent, False)
        for seen in chain:
            self._inside[seen] = answer
        return answer
