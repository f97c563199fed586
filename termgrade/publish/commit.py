"""Turning a plan into Hub commits: one atomic commit, or a pull request of several.

Every commit names its ``parent_commit``. A 412 answer (someone else committed since the
plan was made, or an earlier try landed after all) makes the caller re-plan against the
new head; 429 / 5xx are retried with backoff (:mod:`termgrade.publish.retry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from huggingface_hub import CommitOperationAdd, CommitOperationCopy, CommitOperationDelete, HfApi
from huggingface_hub.hf_api import CommitInfo

from termgrade.core.retry import RetryEvent, RetryPolicy
from termgrade.publish.errors import PublishError, StaleParent
from termgrade.publish.plan import Chunk, CommitLimits
from termgrade.publish.retry import call_with_retries, status_of

T = TypeVar("T")


@dataclass
class HubWriter:
    """The write calls of one publish, all retried and all recorded."""

    api: HfApi
    repo_id: str
    repo_type: str
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    limits: CommitLimits = field(default_factory=CommitLimits)
    retries: list[RetryEvent] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    log: Callable[[str], None] = lambda line: None

    def retry(self, what: str, func: Callable[[], T],
              before_retry: Callable[[], T | None] | None = None) -> T:
        def noted(event: RetryEvent) -> None:
            self.retries.append(event)
            self.log(f"{event.what}: HTTP {event.status or 'connection error'}, "
                     f"retry {event.attempt} in {event.wait_s:g} s")

        return call_with_retries(what, func, self.policy, on_retry=noted,
                                 before_retry=before_retry)

    def commit(self, chunk: Chunk, *, revision: str, parent: str | None, title: str,
               description: str = "", create_pr: bool = False) -> CommitInfo:
        """Commit one chunk; raise :class:`StaleParent` on 412."""
        def send() -> CommitInfo:
            ops: list[CommitOperationAdd | CommitOperationDelete | CommitOperationCopy] = [
                *(CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=str(f.source))
                  for f in chunk.uploads),
                *(CommitOperationDelete(path_in_repo=p, is_folder=False) for p in chunk.deletes),
            ]
            return self.api.create_commit(
                self.repo_id, ops, commit_message=title, commit_description=description,
                repo_type=self.repo_type, revision=revision, create_pr=create_pr,
                parent_commit=parent)

        recover = (lambda: self.find_pr_commit(title)) if create_pr else None
        try:
            info = self.retry(f"commit {title!r}", send, before_retry=recover)
        except Exception as exc:
            if status_of(exc) == 412:
                raise StaleParent(str(exc)) from exc
            raise
        self.commits.append(info.oid)
        self.log(f"committed {chunk.n_ops} operation(s) as {info.oid[:12]} ({title})")
        return info

    def find_pr_commit(self, title: str) -> CommitInfo | None:
        """After a failed create-PR commit: the PR it did open anyway, if any (by title)."""
        refs = self.api.list_repo_refs(self.repo_id, repo_type=self.repo_type,
                                       include_pull_requests=True)
        for ref in reversed(refs.pull_requests or []):
            head = self.api.list_repo_commits(self.repo_id, repo_type=self.repo_type,
                                              revision=ref.ref)[0]
            if head.title == title:
                prefix = "" if self.repo_type == "model" else f"{self.repo_type}s/"
                web = f"{self.api.endpoint}/{prefix}{self.repo_id}"
                num = ref.ref.rsplit("/", 1)[-1]
                return CommitInfo(commit_url=f"{web}/commit/{head.commit_id}",
                                  commit_message=title, commit_description="",
                                  oid=head.commit_id, pr_url=f"{web}/discussions/{num}")
        return None

    def open_and_merge(self, pr_num: int, *, merge: bool) -> None:
        """Mark the pull request ready for review, then (if asked) merge it."""
        self.retry(f"open PR #{pr_num}", lambda: self.api.change_discussion_status(
            self.repo_id, pr_num, "open", repo_type=self.repo_type))
        if not merge:
            return

        def merged_already() -> bool | None:
            details = self.api.get_discussion_details(self.repo_id, pr_num,
                                                      repo_type=self.repo_type)
            return True if details.status == "merged" else None

        def do_merge() -> bool:
            self.api.merge_pull_request(self.repo_id, pr_num, repo_type=self.repo_type)
            return True

        self.retry(f"merge PR #{pr_num}", do_merge, before_retry=merged_already)
        self.log(f"merged pull request #{pr_num}")

    def tag_target(self, tag: str) -> str | None:
        refs = self.retry("list refs", lambda: self.api.list_repo_refs(
            self.repo_id, repo_type=self.repo_type))
        return next((ref.target_commit for ref in refs.tags if ref.name == tag), None)

    def tag(self, tag: str, commit: str, message: str | None) -> bool:
        """Tag ``commit``; False when the tag already points there, an error elsewhere."""
        existing = self.tag_target(tag)
        if existing is not None:
            if existing == commit:
                return False
            raise PublishError(
                f"{self.repo_id}: tag {tag!r} already points at {existing[:12]}, "
                f"not at the published commit {commit[:12]}",
                fix="choose a new release tag (tags are never moved)")
        self.retry(f"tag {tag}", lambda: self.api.create_tag(
            self.repo_id, tag=tag, tag_message=message, revision=commit,
            repo_type=self.repo_type))
        self.log(f"tagged {commit[:12]} as {tag}")
        return True
