"""Test stand-in: storage of the loopback Hub: repositories as files plus their full
commit history.

::

    <root>/
    ├── objects/<sha256>                       every file's bytes (regular and LFS alike)
    └── repos/<type>s/<namespace>/<name>/
        ├── repo.json                          visibility, branches, tags, pull requests
        └── commits/<oid>.json                 one snapshot per commit: parents, message, tree

A commit stores its whole tree (path -> :class:`Entry`), so any revision can be listed or
served without replaying history. Ids look like git's: a file's ``oid`` is the git blob
sha1 of its bytes (of its LFS pointer for LFS files), commit ids are 40 hex digits.
Every method raises :class:`HubError` carrying the HTTP status and the Hub's error code.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from termgrade.core.atomic import atomic_write_bytes, atomic_write_text

GITATTRIBUTES = b"""*.parquet filter=lfs diff=lfs merge=lfs -text
*.arrow filter=lfs diff=lfs merge=lfs -text
*.gz filter=lfs diff=lfs merge=lfs -text
*.tar filter=lfs diff=lfs merge=lfs -text
*.bin filter=lfs diff=lfs merge=lfs -text
"""
"""What a new repo's first commit holds, like the Hub's (abridged) default."""


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        super().__init__(f"{status} {code or ''}: {message}")


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    spec = "version https://git-lfs.github.com/spec/v1"
    return f"{spec}\noid sha256:{sha256}\nsize {size}\n".encode()


@dataclass(frozen=True)
class Entry:
    """One file in a commit's tree."""

    sha256: str
    size: int
    oid: str
    lfs: bool

    @classmethod
    def regular(cls, data: bytes) -> Entry:
        return cls(hashlib.sha256(data).hexdigest(), len(data), git_blob_oid(data), False)

    @classmethod
    def large(cls, sha256: str, size: int) -> Entry:
        return cls(sha256, size, git_blob_oid(lfs_pointer(sha256, size)), True)


@dataclass
class Commit:
    oid: str
    parents: list[str]
    title: str
    description: str
    date: str
    tree: dict[str, Entry]


@dataclass
class PullRequest:
    num: int
    title: str
    description: str
    base: str
    base_commit: str
    head: str
    created_at: str
    status: str = "draft"
    merge_commit: str | None = None


@dataclass
class Repo:
    type: str
    id: str
    private: bool
    created_at: str
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    prs: dict[str, PullRequest] = field(default_factory=dict)

    @property
    def url_prefix(self) -> str:
        return "" if self.type == "model" else f"{self.type}s/"


@dataclass(frozen=True)
class Op:
    """One line of a commit payload: kind is file, lfsFile, deletedFile or deletedFolder."""

    kind: str
    path: str
    content: bytes = b""
    sha256: str = ""
    size: int = 0


class HubStore:
    """Repositories, commits and objects under one directory; safe to share between threads."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        (self.root / "objects").mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self._counter = 0

    # ---- objects -------------------------------------------------------------------------
    def put_object(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        path = self.root / "objects" / sha
        if not path.exists():
            atomic_write_bytes(path, data)
        return sha

    def has_object(self, sha256: str) -> bool:
        return (self.root / "objects" / sha256).is_file()

    def read_object(self, sha256: str) -> bytes:
        return (self.root / "objects" / sha256).read_bytes()

    # ---- repos ---------------------------------------------------------------------------
    def _dir(self, repo_type: str, repo_id: str) -> Path:
        return self.root / "repos" / f"{repo_type}s" / repo_id

    def create_repo(self, repo_type: str, repo_id: str, *, private: bool) -> Repo:
        with self.lock:
            if (self._dir(repo_type, repo_id) / "repo.json").exists():
                raise HubError(409, f"You already created this {repo_type} repo", None)
            repo = Repo(repo_type, repo_id, private, now())
            self.save_repo(repo)
            first = self._write_commit(repo, [], "initial commit", "", self._tree_with_attributes())
            repo.branches["main"] = first.oid
            self.save_repo(repo)
            return repo

    def _tree_with_attributes(self) -> dict[str, Entry]:
        self.put_object(GITATTRIBUTES)
        return {".gitattributes": Entry.regular(GITATTRIBUTES)}

    def get_repo(self, repo_type: str, repo_id: str) -> Repo:
        path = self._dir(repo_type, repo_id) / "repo.json"
        if not path.is_file():
            raise HubError(404, f"Repository {repo_id} not found", "RepoNotFound")
        raw = json.loads(path.read_text())
        prs = {k: PullRequest(**v) for k, v in raw.pop("prs").items()}
        return Repo(**raw, prs=prs)

    def save_repo(self, repo: Repo) -> None:
        atomic_write_text(self._dir(repo.type, repo.id) / "repo.json",
                          json.dumps(asdict(repo), indent=1, sort_keys=True))

    # ---- commits -------------------------------------------------------------------------
    def _write_commit(self, repo: Repo, parents: list[str], title: str, description: str,
                      tree: dict[str, Entry]) -> Commit:
        self._counter += 1
        date = now()
        seed = json.dumps([parents, title, description, date, self._counter,
                           sorted((p, e.oid) for p, e in tree.items())])
        commit = Commit(hashlib.sha1(seed.encode()).hexdigest(), parents, title, description,
                        date, dict(sorted(tree.items())))
        body = asdict(commit)
        atomic_write_text(self._dir(repo.type, repo.id) / "commits" / f"{commit.oid}.json",
                          json.dumps(body, indent=1))
        return commit

    def get_commit(self, repo: Repo, oid: str) -> Commit:
        path = self._dir(repo.type, repo.id) / "commits" / f"{oid}.json"
        raw: dict[str, Any] = json.loads(path.read_text())
        raw["tree"] = {p: Entry(**e) for p, e in raw["tree"].items()}
        return Commit(**raw)

    def resolve(self, repo: Repo, revision: str) -> str:
        """A branch, tag, ``refs/pr/N``, ``refs/heads/B`` or commit id -> commit id."""
        rev = revision.removeprefix("refs/heads/")
        if rev in repo.branches:
            return repo.branches[rev]
        if rev in repo.tags:
            return repo.tags[rev]
        if rev.startswith("refs/pr/") and rev[8:] in repo.prs:
            return repo.prs[rev[8:]].head
        if len(rev) == 40 and (self._dir(repo.type, repo.id) / "commits" / f"{rev}.json").exists():
            return rev
        raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")

    def commit(self, repo: Repo, revision: str, ops: list[Op], *, title: str, description: str,
               parent: str | None, create_pr: bool) -> tuple[Commit, PullRequest | None]:
        """Apply ``ops`` on top of ``revision`` (a branch or an open pull request's ref)."""
        with self.lock:
            repo = self.get_repo(repo.type, repo.id)
            head = self.resolve(repo, revision)
            if parent is not None and parent != head:
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            is_pr_ref = revision.startswith("refs/pr/")
            if not create_pr and not is_pr_ref and revision.removeprefix("refs/heads/") \
                    not in repo.branches:
                raise HubError(400, f"Cannot commit to {revision}: not a branch", None)
            if is_pr_ref and repo.prs[revision[8:]].status not in ("draft", "open"):
                raise HubError(403, f"Pull request {revision} is not open", None)
            tree = self._apply(dict(self.get_commit(repo, head).tree), ops)
            commit = self._write_commit(repo, [head], title, description, tree)
            pr = None
            if create_pr:
                pr = self._open_pr(repo, title, description, revision, head, commit.oid)
            elif is_pr_ref:
                repo.prs[revision[8:]].head = commit.oid
            else:
                repo.branches[revision.removeprefix("refs/heads/")] = commit.oid
            self.save_repo(repo)
            return commit, pr

    def _apply(self, tree: dict[str, Entry], ops: list[Op]) -> dict[str, Entry]:
        for op in ops:
            if op.kind == "file":
                self.put_object(op.content)
                tree[op.path] = Entry.regular(op.content)
            elif op.kind == "lfsFile":
                if not self.has_object(op.sha256):
                    raise HubError(422, f"{op.path}: LFS object {op.sha256} was never uploaded")
                size = op.size if op.size >= 0 else len(self.read_object(op.sha256))
                tree[op.path] = Entry.large(op.sha256, size)
            elif op.kind == "deletedFile":
                if tree.pop(op.path, None) is None:
                    raise HubError(404, f"{op.path}: A file with this name doesn't exist",
                                   "EntryNotFound")
            elif op.kind == "deletedFolder":
                prefix = op.path.rstrip("/") + "/"
                doomed = [p for p in tree if p.startswith(prefix)]
                if not doomed:
                    raise HubError(404, f"{op.path}: no such folder", "EntryNotFound")
                for path in doomed:
                    del tree[path]
            else:
                raise HubError(400, f"unknown commit operation {op.kind!r}")
        return tree

    def history(self, repo: Repo, oid: str) -> list[Commit]:
        """First-parent history, newest first."""
        out = []
        while True:
            commit = self.get_commit(repo, oid)
            out.append(commit)
            if not commit.parents:
                return out
            oid = commit.parents[0]

    def last_commits(self, repo: Repo, oid: str) -> dict[str, Commit]:
        """For every path at ``oid``, the newest commit that changed it."""
        history = self.history(repo, oid)
        found: dict[str, Commit] = {}
        for newer, older in zip(history, [*history[1:], None], strict=True):
            for path, entry in newer.tree.items():
                if path not in found and (older is None or older.tree.get(path) != entry):
                    found[path] = newer
        return found

    # ---- refs and pull requests ------------------------------------------------------------
    def create_tag(self, repo: Repo, tag: str, revision: str) -> None:
        with self.lock:
            repo = self.get_repo(repo.type, repo.id)
            if tag in repo.tags:
                raise HubError(409, f"Tag {tag} already exists", None)
            repo.tags[tag] = self.resolve(repo, revision)
            self.save_repo(repo)

    def delete_tag(self, repo: Repo, tag: str) -> None:
        with self.lock:
            repo = self.get_repo(repo.type, repo.id)
            if repo.tags.pop(tag, None) is None:
                raise HubError(404, f"Tag {tag} not found", "RevisionNotFound")
            self.save_repo(repo)

    def create_branch(self, repo: Repo, branch: str, starting_point: str | None) -> None:
        with self.lock:
            repo = self.get_repo(repo.type, repo.id)
            if branch in repo.branches:
                raise HubError(409, f"Branch {branch} already exists", None)
            repo.branches[branch] = self.resolve(repo, starting_point or "main")
            self.save_repo(repo)

    def _open_pr(self, repo: Repo, title: str, description: str, base: str, base_commit: str,
                 head: str) -> PullRequest:
        num = len(repo.prs) + 1
        pr = PullRequest(num, title, description, base.removeprefix("refs/heads/"), base_commit,
                         head, now())
        repo.prs[str(num)] = pr
        return pr

    def create_pr(self, repo: Repo, title: str, description: str) -> PullRequest:
        with self.lock:
            repo = self.get_repo(repo.type, repo.id)
            pr = self._open_pr(repo, title, description, "main", repo.branches["main"],
                               repo.branches["main"])
            self.save_repo(repo)
            return pr

    def merge_pr(self, repo: Repo, num: int) -> str:
        """Three-way merge of the PR's changes onto its base branch; 409 on a conflict."""
        with self.lock:
            repo = self.get_repo(repo.type, repo.id)
            pr = repo.prs.get(str(num))
            if pr is None or pr.status not in ("draft", "open"):
                raise HubError(404 if pr is None else 403, f"pull request #{num} is not open")
            base_tree = self.get_commit(repo, pr.base_commit).tree
            ours = self.get_commit(repo, repo.branches[pr.base]).tree
            theirs = self.get_commit(repo, pr.head).tree
            merged = dict(ours)
            for path in set(base_tree) | set(theirs):
                if base_tree.get(path) == theirs.get(path):
                    continue
                if ours.get(path) not in (base_tree.get(path), theirs.get(path)):
                    raise HubError(409, f"merge conflict on {path}")
                if path in theirs:
                    merged[path] = theirs[path]
                else:
                    merged.pop(path, None)
            commit = self._write_commit(repo, [repo.branches[pr.base], pr.head],
                                        f"Merge pull request #{num}: {pr.title}", "", merged)
            repo.branches[pr.base] = commit.oid
            pr.status, pr.merge_commit = "merged", commit.oid
            self.save_repo(repo)
            return commit.oid

    def set_pr_status(self, repo: Repo, num: int, status: str) -> None:
        with self.lock:
            repo = self.get_repo(repo.type, repo.id)
            if str(num) not in repo.prs:
                raise HubError(404, f"pull request #{num} not found")
            repo.prs[str(num)].status = status
            self.save_repo(repo)
