"""The two sides of a publish diff: the staged directory's files and the remote listing.

A local file is compared with its remote twin by size and by the id the Hub keeps for it:
the LFS sha256 for LFS files, the git blob sha1 for regular ones (which is what
``list_repo_tree`` reports as ``blob_id``). Both ids are computed for every local file so
either kind of remote entry can be matched.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from termgrade.publish.errors import PublishError

IGNORED_NAMES = frozenset({".git", "__pycache__", ".DS_Store", ".pytest_cache", ".mypy_cache"})
"""Never published: version-control and cache folders."""


@dataclass(frozen=True)
class LocalFile:
    path: str
    """POSIX path inside the repo."""
    source: Path
    size: int
    sha256: str
    git_oid: str
    """git blob sha1 of the bytes: ``sha1(b"blob <size>\\0" + bytes)``."""


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    blob_id: str
    """The git blob sha1 (of the LFS pointer for LFS files)."""
    lfs_sha256: str | None
    """sha256 of the content for LFS files, else None."""

    def matches(self, local: LocalFile) -> bool:
        if self.size != local.size:
            return False
        if self.lfs_sha256 is not None:
            return self.lfs_sha256 == local.sha256
        return self.blob_id == local.git_oid


def hash_file(path: Path, chunk: int = 1 << 20) -> tuple[int, str, str]:
    """(size, sha256, git blob sha1) of a file, read once in chunks."""
    size = path.stat().st_size
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size)
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            sha256.update(block)
            sha1.update(block)
    return size, sha256.hexdigest(), sha1.hexdigest()


def scan_local(root: Path) -> dict[str, LocalFile]:
    """Every regular file under ``root`` by repo path; symlinks are refused."""
    root = Path(root)
    if not root.is_dir():
        raise PublishError(f"{root}: not a directory",
                           fix="pass the staged repo directory built by `termgrade build`")
    out: dict[str, LocalFile] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in IGNORED_NAMES for part in rel.parts):
            continue
        if path.is_symlink():
            raise PublishError(f"{path}: symlinks cannot be published",
                               fix="replace the link with the file it points to")
        if path.is_file():
            size, sha256, oid = hash_file(path)
            out[rel.as_posix()] = LocalFile(rel.as_posix(), path, size, sha256, oid)
    return out


def manifest_digest(files: dict[str, LocalFile]) -> str:
    """sha256 over every path and content id: identifies one state of the staged dir."""
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(f"{path}\0{files[path].sha256}\n".encode())
    return h.hexdigest()
