"""``publish`` against the loopback Hub with the real huggingface_hub client."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import RepositoryNotFoundError

from termgrade.publish import (
    CommitLimits,
    PublishOptions,
    PublishResult,
    RetryPolicy,
    ValidationOutcome,
    make_plan,
    publish,
    scan_local,
)
from termgrade.publish.errors import PublishError
from termgrade.publish.journal import PublishJournal
from termgrade.publish.remote import remote_state
from tests.support.hf_env import subprocess_env
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import Fault, HubServer
from tests.support.staging import stage_environments_repo
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
REPO = "org/termgrade-environments"
ROOT = Path(__file__).resolve().parents[2]


def ok(root: Path) -> ValidationOutcome:
    return ValidationOutcome(True)


@pytest.fixture
def staged(tmp_path: Path, make_task: MakeTask) -> Path:
    other = make_task("hello-task")
    return stage_environments_repo(tmp_path / "dist" / "environments", {
        "unseen": [ROOT / "environments" / "word-frequency"], "train151": [other]})


def options(hub: HubServer, tmp_path: Path, **kw: object) -> PublishOptions:  # noqa: F811
    base: dict[str, object] = dict(repo_id=REPO, endpoint=hub.url, token="hf_dummy",
                                   state_dir=tmp_path / "state",
                                   retry=RetryPolicy(attempts=4, base_s=0.01, max_s=0.05))
    return PublishOptions(**(base | kw))  # type: ignore[arg-type]


def run(staged: Path, opts: PublishOptions) -> PublishResult:
    return publish(staged, opts, validator=ok)


def remote_equals_local(hub: HubServer, staged: Path, revision: str = "main") -> bool:  # noqa: F811
    api = HfApi(endpoint=hub.url, token="hf_dummy")
    state = remote_state(api, REPO, "dataset", revision, RetryPolicy())
    return make_plan(scan_local(staged), state.files, state.head).empty


def commits_made(hub: HubServer) -> int:  # noqa: F811
    return hub.count("POST", "/commit/", 200)


def test_first_publish_creates_the_repo_in_one_atomic_commit(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    result = run(staged, options(hub, tmp_path))
    assert result.created_repo and len(result.commits) == 1 and result.pr_num is None
    assert result.plan.n_ops == len(scan_local(staged)) and not result.plan.deletes
    assert commits_made(hub) == 1
    assert remote_equals_local(hub, staged)
    files = HfApi(endpoint=hub.url).list_repo_files(REPO, repo_type="dataset")
    assert ".gitattributes" in files and "tasks/word-frequency/solution/solve.sh" in files


@pytest.mark.slow
def test_load_dataset_from_the_published_repo(hub: HubServer, staged: Path, tmp_path: Path,  # noqa: F811
                                              hf_home: Path) -> None:  # noqa: F811
    run(staged, options(hub, tmp_path))
    code = f"""
import json, datasets
tasks = datasets.load_dataset({REPO!r}, "tasks")
labels = datasets.load_dataset({REPO!r}, "labels")
stream = datasets.load_dataset({REPO!r}, "tasks", split="unseen", streaming=True)
print(json.dumps({{
    "splits": {{k: list(v["task_id"]) for k, v in tasks.items()}},
    "labels": labels["train"].num_rows,
    "streamed": [(r["task_id"], len(r["archive"])) for r in stream],
}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=subprocess_env(hf_home, hub.url), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["splits"] == {"unseen": ["word-frequency"], "train151": ["hello-task"]}
    assert out["labels"] == 2
    assert out["streamed"][0][0] == "word-frequency" and out["streamed"][0][1] > 100
    assert hub.count("GET", "/resolve/", 206) >= 1  # streaming read byte ranges


def test_noop_republish_plans_zero_changes_and_makes_no_commit(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    run(staged, options(hub, tmp_path))
    before = commits_made(hub)
    again = run(staged, options(hub, tmp_path))
    assert again.plan.empty and again.plan.unchanged == len(scan_local(staged))
    assert again.commits == [] and commits_made(hub) == before
    assert hub.count("POST", "/preupload/") == 1  # only the first publish uploaded


def test_stale_files_are_deleted_and_gitattributes_kept(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    run(staged, options(hub, tmp_path))
    shutil.rmtree(staged / "tasks" / "hello-task")
    (staged / "NOTES.md").write_text("new\n")
    (staged / "labels.jsonl").write_text("{}\n")
    result = run(staged, options(hub, tmp_path))
    plan = result.plan
    assert [f.path for f in plan.adds] == ["NOTES.md"]
    assert [f.path for f in plan.changes] == ["labels.jsonl"]
    assert plan.deletes and all(p.startswith("tasks/hello-task/") for p in plan.deletes)
    files = HfApi(endpoint=hub.url).list_repo_files(REPO, repo_type="dataset")
    assert ".gitattributes" in files and not any(f.startswith("tasks/hello-task/") for f in files)
    assert remote_equals_local(hub, staged)


def test_dry_run_plans_without_writing(hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    result = run(staged, options(hub, tmp_path, dry_run=True))
    assert result.dry_run and len(result.plan.adds) == len(scan_local(staged))
    assert {seen.method for seen in hub.requests} <= {"GET", "HEAD"}
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.url).dataset_info(REPO)


def test_failed_validation_refuses_before_talking_to_the_hub(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    def bad(root: Path) -> ValidationOutcome:
        return ValidationOutcome(False, ["data/tasks: archive_sha256 mismatch for word-frequency"])

    with pytest.raises(PublishError, match="archive_sha256 mismatch"):
        publish(staged, options(hub, tmp_path), validator=bad)
    assert hub.requests == []


def test_large_diff_goes_through_one_pull_request_merged_at_the_end(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    opts = options(hub, tmp_path, limits=CommitLimits(max_ops=4))
    result = run(staged, opts)
    n_files = len(scan_local(staged))
    assert result.pr_num == 1 and result.merged
    assert len(result.commits) == -(-n_files // 4)
    assert remote_equals_local(hub, staged)
    assert not PublishJournal.path_for(opts.state_dir, "dataset", REPO, "main").exists()
    titles = [c.title for c in HfApi(endpoint=hub.url).list_repo_commits(REPO, repo_type="dataset")]
    assert titles[0].startswith("Merge pull request #1")


def test_rerun_resumes_a_chunked_publish_after_a_failure(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    opts = options(hub, tmp_path, limits=CommitLimits(max_ops=4),
                   retry=RetryPolicy(attempts=2, base_s=0.01))
    n_chunks = -(-len(scan_local(staged)) // 4)
    hub.inject(Fault(path="/commit/refs%2Fpr%2F1", status=503, times=2))  # chunk 2 fails twice
    with pytest.raises(Exception, match="503"):
        run(staged, opts)
    journal = PublishJournal.load(PublishJournal.path_for(opts.state_dir, "dataset", REPO, "main"))
    assert journal is not None and journal.pr_num == 1 and len(journal.chunks) == 1
    assert not remote_equals_local(hub, staged)
    result = run(staged, opts)
    assert result.resumed_chunks == 1 and result.pr_num == 1 and result.merged
    assert len(result.commits) == n_chunks - 1
    assert commits_made(hub) == n_chunks  # no chunk was committed twice
    assert remote_equals_local(hub, staged)


@pytest.mark.parametrize("status", [429, 503])
def test_commit_is_retried_with_backoff(hub: HubServer, staged: Path, tmp_path: Path,  # noqa: F811
                                        status: int) -> None:
    sleeps: list[float] = []
    opts = options(hub, tmp_path, retry=RetryPolicy(attempts=4, base_s=0.5, max_s=1.0,
                                                    sleep=sleeps.append))
    hub.inject(Fault(path="/commit/", status=status, times=2,
                     retry_after=0 if status == 429 else None))
    result = run(staged, opts)
    assert [e.status for e in result.retries] == [status, status]
    assert sleeps == ([0.0, 0.0] if status == 429 else [0.5, 1.0])
    assert hub.count("POST", "/commit/", status) == 2 and commits_made(hub) == 1
    assert remote_equals_local(hub, staged)


def test_stale_parent_412_replans_against_the_new_head(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    run(staged, options(hub, tmp_path))
    (staged / "NOTES.md").write_text("v2\n")
    hub.inject(Fault(path="/commit/", action="foreign_commit"))
    result = run(staged, options(hub, tmp_path))
    assert result.replans == 1 and hub.count("POST", "/commit/", 412) == 1
    files = HfApi(endpoint=hub.url).list_repo_files(REPO, repo_type="dataset")
    assert "FOREIGN.md" not in files and "NOTES.md" in files
    assert remote_equals_local(hub, staged)


def test_create_pr_leaves_it_open_and_a_rerun_reuses_it(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    run(staged, options(hub, tmp_path))
    (staged / "NOTES.md").write_text("review me\n")
    first = run(staged, options(hub, tmp_path, create_pr=True))
    assert first.pr_num == 1 and not first.merged
    api = HfApi(endpoint=hub.url)
    assert api.get_discussion_details(REPO, 1, repo_type="dataset").status == "open"
    assert "NOTES.md" not in api.list_repo_files(REPO, repo_type="dataset")
    assert remote_equals_local(hub, staged, revision="refs/pr/1")
    again = run(staged, options(hub, tmp_path, create_pr=True))
    assert again.pr_num == 1 and again.commits == []


def test_release_tag_is_created_and_never_moved(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    first = run(staged, options(hub, tmp_path, tag="v1.0"))
    assert first.tagged == "v1.0"
    refs = HfApi(endpoint=hub.url).list_repo_refs(REPO, repo_type="dataset")
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1.0", first.final_commit)]
    assert run(staged, options(hub, tmp_path, tag="v1.0")).tagged is None  # same commit: ok
    (staged / "NOTES.md").write_text("v2\n")
    with pytest.raises(PublishError, match="tags are never moved"):
        run(staged, options(hub, tmp_path, tag="v1.0"))


def test_publish_to_a_new_branch_and_a_private_repo(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    result = run(staged, options(hub, tmp_path, revision="staging", private=True))
    assert result.created_repo and hub.store.get_repo("dataset", REPO).private
    assert remote_equals_local(hub, staged, revision="staging")
    api = HfApi(endpoint=hub.url, token="hf_dummy")
    assert api.list_repo_files(REPO, repo_type="dataset") == [".gitattributes"]
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.url, token=False).dataset_info(REPO)


def test_a_commit_whose_response_was_lost_is_not_made_twice(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    run(staged, options(hub, tmp_path))
    (staged / "labels.jsonl").write_text("{}\n")
    (staged / "tasks" / "hello-task" / "instruction.md").unlink()
    hub.inject(Fault(path="/commit/", status=503, action="lost_response"))
    result = run(staged, options(hub, tmp_path))
    # The retry sends the delete again with the old parent: 412, re-plan, nothing left.
    assert [e.status for e in result.retries] == [503] and result.replans == 1
    history = HfApi(endpoint=hub.url).list_repo_commits(REPO, repo_type="dataset")
    assert len(history) == 3  # the initial commit, the first publish, this one once
    assert result.final_commit == history[0].commit_id
    assert remote_equals_local(hub, staged)


def test_a_pull_request_whose_response_was_lost_is_not_opened_twice(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    hub.inject(Fault(path="/commit/main", status=503, action="lost_response"))
    result = run(staged, options(hub, tmp_path, limits=CommitLimits(max_ops=4)))
    assert result.pr_num == 1 and result.merged
    refs = HfApi(endpoint=hub.url).list_repo_refs(REPO, repo_type="dataset",
                                                  include_pull_requests=True)
    assert [r.ref for r in refs.pull_requests or []] == ["refs/pr/1"]
    assert remote_equals_local(hub, staged)


def test_a_rerun_with_other_content_opens_a_new_pull_request(
        hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    opts = options(hub, tmp_path, limits=CommitLimits(max_ops=4),
                   retry=RetryPolicy(attempts=1, base_s=0.01))
    hub.inject(Fault(path="/commit/refs%2Fpr%2F1", status=503))
    with pytest.raises(PublishError, match="rerun the same command"):
        run(staged, opts)
    (staged / "NOTES.md").write_text("changed meanwhile\n")
    result = run(staged, opts)
    assert result.pr_num == 2 and result.merged and result.resumed_chunks == 0
    assert any("#1" in note and "left open" in note for note in result.notes)
    assert remote_equals_local(hub, staged)
