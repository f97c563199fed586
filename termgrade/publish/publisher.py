"""``publish(DIR, options)``: validate, plan the diff against the Hub, commit it, tag it.

1. Validate the staged repo (:mod:`termgrade.publish.validation`); refuse on failure.
2. Plan: local files vs the remote listing at the target's head (adds, changes, stale
   deletes). A dry run stops here.
3. Create the repo / branch if missing. If the plan fits one commit (:class:`CommitLimits`), make
   it as one atomic commit. Otherwise (or with ``create_pr``) open a pull request, commit
   the chunks to it one by one, journaling each, and merge it at the end (``create_pr``
   leaves it open for review instead). A rerun resumes from the journal.
4. Tag the published commit (``tag``); an existing tag is never moved.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import HfApi

from termgrade.core.progress import track
from termgrade.core.retry import RetryEvent, RetryPolicy
from termgrade.core.settings import SETTINGS
from termgrade.publish.card_repo import check_card_repo_id
from termgrade.publish.commit import HubWriter
from termgrade.publish.errors import PublishError, StaleParent
from termgrade.publish.files import LocalFile, manifest_digest, scan_local
from termgrade.publish.journal import PublishJournal
from termgrade.publish.plan import CommitLimits, Plan, make_plan
from termgrade.publish.remote import RemoteState, head_of, list_files, remote_state
from termgrade.publish.retry import is_hub_failure, unresolvable
from termgrade.publish.validation import Validator, check_staged_repo

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


@dataclass(frozen=True)
class PublishOptions:
    repo_id: str
    repo_type: str = "dataset"
    revision: str = "main"
    create_pr: bool = False
    """Leave the changes in an open pull request for review instead of merging them."""
    private: bool = False
    """Visibility of a repo this publish creates (an existing repo keeps its own)."""
    tag: str | None = None
    tag_message: str | None = None
    dry_run: bool = False
    message: str = "Publish with termgrade"
    limits: CommitLimits = field(default_factory=CommitLimits)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    endpoint: str | None = None
    """Hub URL; None: ``HF_ENDPOINT`` or huggingface.co."""
    token: str | None = None
    state_dir: Path = SETTINGS.state_dir
    """Where the resume journal lives."""
    max_replans: int = 5
    """How often a stale parent (412) may send the publish back to planning."""


@dataclass
class PublishResult:
    repo_id: str
    revision: str
    plan: Plan
    """The plan against the target as found before anything was written."""
    dry_run: bool
    created_repo: bool = False
    commits: list[str] = field(default_factory=list)
    pr_num: int | None = None
    merged: bool = False
    final_commit: str | None = None
    tagged: str | None = None
    replans: int = 0
    resumed_chunks: int = 0
    retries: list[RetryEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Run:
    def __init__(self, source: Path, options: PublishOptions, api: HfApi,
                 log: Callable[[str], None]) -> None:
        self.options, self.api, self.log = options, api, log
        self.local: dict[str, LocalFile] = scan_local(source)
        self.writer = HubWriter(api, options.repo_id, options.repo_type, options.retry,
                                options.limits, log=log)

    def state(self, revision: str | None = None) -> RemoteState:
        o = self.options
        return remote_state(self.api, o.repo_id, o.repo_type, revision or o.revision, o.retry)

    def pr_state(self, pr_num: int) -> RemoteState:
        o = self.options
        head = head_of(self.api, o.repo_id, o.repo_type, f"refs/pr/{pr_num}", o.retry)
        if head is None:
            raise PublishError(f"{o.repo_id}: pull request #{pr_num} has no ref",
                               fix="delete the publish journal and rerun")
        return RemoteState(True, True, head, list_files(self.api, o.repo_id, o.repo_type, head,
                                                        o.retry))

    def plan(self, state: RemoteState) -> Plan:
        return make_plan(self.local, state.files, state.head)

    def direct(self, state: RemoteState, result: PublishResult) -> str | None:
        """One atomic commit; None when the plan does not fit one."""
        o = self.options
        for _ in range(o.max_replans + 1):
            plan = self.plan(state)
            if plan.empty:
                return state.head
            chunks = plan.chunks(o.limits)
            if len(chunks) > 1:
                return None
            try:
                return self.writer.commit(chunks[0], revision=o.revision, parent=state.head,
                                          title=o.message, description=plan.summary()).oid
            except StaleParent:
                result.replans += 1
                self.log("the target moved since the plan was made (412); planning again")
                state = self.state()
        raise PublishError(f"{o.repo_id}@{o.revision} kept changing during the publish",
                           fix="rerun when no one else is pushing to it")

    def via_pr(self, journal: PublishJournal, result: PublishResult) -> int | None:
        """Commit every chunk to one pull request; its number (None: nothing to commit)."""
        o = self.options
        run = hashlib.sha1(journal.started_at.encode()).hexdigest()[:8]
        for _ in range(o.max_replans + 1):
            num = journal.pr_num
            state = self.state() if num is None else self.pr_state(num)
            plan = self.plan(state)
            if plan.empty:
                break
            chunks = plan.chunks(o.limits)
            head = state.head
            try:
                with track("committing", total=len(chunks)) as bar:
                    for k, chunk in enumerate(chunks, 1):
                        title = f"{o.message} (part {k} of {len(chunks)}, run {run})"
                        info = self.writer.commit(
                            chunk, revision=o.revision if num is None else f"refs/pr/{num}",
                            parent=head, title=title, create_pr=num is None)
                        if num is None:
                            num = journal.pr_num = info.pr_num
                            self.log(f"opened pull request #{num}: {info.pr_url}")
                        head = info.oid
                        journal.record_chunk(len(journal.chunks), info.oid, chunk.n_ops)
                        bar.advance()
            except StaleParent:
                result.replans += 1
                self.log("the pull request moved since the plan was made (412); planning again")
        else:
            raise PublishError(f"{o.repo_id}: the pull request kept changing during the publish",
                               fix="rerun the same command to resume")
        return journal.pr_num

    def resume_journal(self, result: PublishResult) -> tuple[PublishJournal, bool]:
        """The journal to use and whether it continues an earlier run's open pull request."""
        o = self.options
        path = PublishJournal.path_for(o.state_dir, o.repo_type, o.repo_id, o.revision)
        digest = manifest_digest(self.local)
        old = PublishJournal.load(path)
        if old is not None and old.pr_num is not None:
            status = self.writer.retry("PR status", lambda: self.api.get_discussion_details(
                o.repo_id, old.pr_num or 0, repo_type=o.repo_type)).status
            if old.manifest_digest == digest and status in ("draft", "open"):
                result.resumed_chunks = len(old.chunks)
                self.log(f"resuming pull request #{old.pr_num} ({len(old.chunks)} chunk(s) "
                         f"already committed, journal {path})")
                return old, True
            if status in ("draft", "open"):
                result.notes.append(f"pull request #{old.pr_num} from an earlier run with other "
                                    "content was left open; close it on the Hub")
        if old is not None:
            old.remove()
        return PublishJournal(path, o.repo_id, o.repo_type, o.revision, digest), False


def publish(source: Path, options: PublishOptions, *, validator: Validator | None = None,
            api: HfApi | None = None, log: Callable[[str], None] | None = None) -> PublishResult:
    """Publish the staged repo ``source`` to ``options.repo_id`` (see the module docstring)."""
    o = options
    if not REPO_ID.match(o.repo_id):
        raise PublishError(f"{o.repo_id!r} is not a repo id", fix="use the form namespace/name")
    if o.tag and o.create_pr:
        raise PublishError("--tag cannot be combined with --create-pr: nothing is released "
                           "until the pull request is merged", fix="tag after merging it")
    check_card_repo_id(Path(source), o.repo_id)
    check_staged_repo(Path(source), validator)
    run = _Run(Path(source), o, api or HfApi(endpoint=o.endpoint, token=o.token),
               log or (lambda line: None))
    try:
        return _publish(run)
    except PublishError:
        raise
    except Exception as exc:
        if not is_hub_failure(exc):
            raise
        if unresolvable(exc):
            raise PublishError(f"{o.repo_id}: cannot reach the Hub: {run.api.endpoint} does not "
                               f"resolve ({exc})",
                               fix="connect to the network, or set HF_ENDPOINT to a Hub "
                                   "you can reach") from exc
        raise PublishError(f"{o.repo_id}: a Hub request failed after retries: {exc}",
                           fix="rerun the same command: nothing committed is redone, and a "
                               "chunked publish resumes from its journal") from exc


def _publish(run: _Run) -> PublishResult:
    o = run.options
    state = run.state()
    result = PublishResult(o.repo_id, o.revision, run.plan(state), o.dry_run,
                           retries=run.writer.retries, commits=run.writer.commits)
    if o.dry_run:
        return result
    if o.tag and state.exists:
        target = run.writer.tag_target(o.tag)
        if target is not None and not (result.plan.empty and target == state.head):
            raise PublishError(f"{o.repo_id}: tag {o.tag!r} already exists (at {target[:12]})",
                               fix="choose a new release tag (tags are never moved)")
    if not state.exists:
        run.writer.retry("create repo", lambda: run.api.create_repo(
            o.repo_id, repo_type=o.repo_type, private=o.private, exist_ok=True))
        result.created_repo = True
        run.log(f"created {o.repo_type} repo {o.repo_id}" + (" (private)" if o.private else ""))
        state = run.state()
    if not state.branch_exists:
        run.writer.retry("create branch", lambda: run.api.create_branch(
            o.repo_id, branch=o.revision, revision=state.head, repo_type=o.repo_type,
            exist_ok=True))
        state = run.state()
    journal, resuming = run.resume_journal(result)
    final = None if (o.create_pr or resuming) else run.direct(state, result)
    if final is None:
        result.pr_num = run.via_pr(journal, result)
        if result.pr_num is None:
            result.notes.append("nothing to publish: the target already holds this content")
            return _tag(run, result, run.state().head)
        run.writer.open_and_merge(result.pr_num, merge=not o.create_pr)
        if o.create_pr:
            return result
        result.merged = True
        journal.remove()
        final = run.direct(run.state(), result)
        if final is None:
            raise PublishError(f"{o.repo_id}@{o.revision} changed while the pull request was "
                               "open, and the difference needs more than one commit",
                               fix="rerun the same command")
    return _tag(run, result, final)


def _tag(run: _Run, result: PublishResult, final: str | None) -> PublishResult:
    o = run.options
    result.final_commit = final
    if o.tag and final is not None and run.writer.tag(o.tag, final, o.tag_message):
        result.tagged = o.tag
    return result
