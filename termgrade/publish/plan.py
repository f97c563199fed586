"""The diff between a staged directory and a remote revision, and how it is cut into commits.

A plan lists files to add (absent remotely), to change (size or content id differs) and to
delete (remote files the staged dir no longer has: stale files of an earlier release).
Remote paths in :data:`KEEP_REMOTE` are never deleted. An empty plan means the remote
already equals the directory, so nothing is committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from termgrade.publish.files import LocalFile, RemoteFile

KEEP_REMOTE = frozenset({".gitattributes"})
"""Remote files a publish leaves alone when the staged dir lacks them (the Hub's LFS rules)."""


@dataclass(frozen=True)
class CommitLimits:
    max_ops: int = 1000
    """Operations per commit (the Hub advises keeping commits to a few thousand files)."""
    max_bytes: int = 2 * 1024**3
    """Bytes uploaded per commit."""


@dataclass(frozen=True)
class Chunk:
    index: int
    uploads: list[LocalFile]
    deletes: list[str]

    @property
    def n_ops(self) -> int:
        return len(self.uploads) + len(self.deletes)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.uploads)


@dataclass(frozen=True)
class Plan:
    adds: list[LocalFile] = field(default_factory=list)
    changes: list[LocalFile] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    unchanged: int = 0
    base_commit: str | None = None
    """The remote commit the plan was made against (None: the repo does not exist yet)."""

    @property
    def empty(self) -> bool:
        return not (self.adds or self.changes or self.deletes)

    @property
    def n_ops(self) -> int:
        return len(self.adds) + len(self.changes) + len(self.deletes)

    @property
    def upload_bytes(self) -> int:
        return sum(f.size for f in [*self.adds, *self.changes])

    def chunks(self, limits: CommitLimits) -> list[Chunk]:
        """Uploads in path order, then deletes, packed greedily under both limits."""
        out: list[Chunk] = []
        uploads: list[LocalFile] = []
        deletes: list[str] = []
        size = 0

        def flush() -> None:
            nonlocal uploads, deletes, size
            if uploads or deletes:
                out.append(Chunk(len(out), uploads, deletes))
            uploads, deletes, size = [], [], 0

        for item in sorted([*self.adds, *self.changes], key=lambda f: f.path):
            if uploads and (len(uploads) + 1 > limits.max_ops
                            or size + item.size > limits.max_bytes):
                flush()
            uploads.append(item)
            size += item.size
        for path in self.deletes:
            if len(uploads) + len(deletes) + 1 > limits.max_ops:
                flush()
            deletes.append(path)
        flush()
        return out

    def summary(self) -> str:
        return (f"{len(self.adds)} to add, {len(self.changes)} to change, "
                f"{len(self.deletes)} to delete, {self.unchanged} unchanged "
                f"({self.upload_bytes:,} bytes to upload)")

    def lines(self) -> list[str]:
        """One line per operation, ``+`` add, ``~`` change, ``-`` delete."""
        return ([f"+ {f.path} ({f.size:,} B)" for f in self.adds]
                + [f"~ {f.path} ({f.size:,} B)" for f in self.changes]
                + [f"- {p}" for p in self.deletes])


def make_plan(local: dict[str, LocalFile], remote: dict[str, RemoteFile],
              base_commit: str | None, *, keep: frozenset[str] = KEEP_REMOTE) -> Plan:
    adds, changes, unchanged = [], [], 0
    for path, item in sorted(local.items()):
        twin = remote.get(path)
        if twin is None:
            adds.append(item)
        elif twin.matches(item):
            unchanged += 1
        else:
            changes.append(item)
    deletes = sorted(p for p in remote if p not in local and p not in keep)
    return Plan(adds, changes, deletes, unchanged, base_commit)
