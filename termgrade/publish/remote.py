"""What the Hub holds at a revision: whether the repo and branch exist, the head commit, and
every file with the ids a diff needs (``list_repo_tree(recursive=True)`` pinned to the head
commit, so the listing and the ``parent_commit`` of the next commit agree)."""

from __future__ import annotations

from dataclasses import dataclass, field

from huggingface_hub import HfApi
from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError
from huggingface_hub.hf_api import RepoFile

from termgrade.core.retry import RetryPolicy
from termgrade.publish.files import RemoteFile
from termgrade.publish.retry import call_with_retries


@dataclass(frozen=True)
class RemoteState:
    exists: bool
    branch_exists: bool
    head: str | None
    """Head commit of the revision (of ``main`` when the branch does not exist yet)."""
    files: dict[str, RemoteFile] = field(default_factory=dict)


def list_files(api: HfApi, repo_id: str, repo_type: str, commit: str,
               policy: RetryPolicy) -> dict[str, RemoteFile]:
    def fetch() -> list[RepoFile]:
        return [item for item in api.list_repo_tree(repo_id, recursive=True, revision=commit,
                                                    repo_type=repo_type)
                if isinstance(item, RepoFile)]

    out = {}
    for item in call_with_retries(f"list {repo_id}@{commit[:8]}", fetch, policy):
        lfs = item.lfs.sha256 if item.lfs is not None else None
        out[item.path] = RemoteFile(item.path, int(item.size), item.blob_id, lfs)
    return out


def head_of(api: HfApi, repo_id: str, repo_type: str, revision: str,
            policy: RetryPolicy) -> str | None:
    """The revision's head commit, or None when the revision does not exist."""
    def fetch() -> str | None:
        try:
            return api.repo_info(repo_id, repo_type=repo_type, revision=revision).sha
        except RevisionNotFoundError:
            return None

    return call_with_retries(f"head of {repo_id}@{revision}", fetch, policy)


def remote_state(api: HfApi, repo_id: str, repo_type: str, revision: str,
                 policy: RetryPolicy) -> RemoteState:
    try:
        head = head_of(api, repo_id, repo_type, revision, policy)
    except RepositoryNotFoundError:
        return RemoteState(exists=False, branch_exists=False, head=None)
    branch_exists = head is not None
    if head is None:
        head = head_of(api, repo_id, repo_type, "main", policy)
    if head is None:
        return RemoteState(exists=True, branch_exists=False, head=None)
    return RemoteState(True, branch_exists, head, list_files(api, repo_id, repo_type, head, policy))
