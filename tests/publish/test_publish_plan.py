"""Planning, chunking, retrying, journaling and the validation call site, without a server."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx2
import pytest
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils.sha import git_hash

from termgrade.core.retry import RetryEvent, RetryPolicy
from termgrade.publish import CommitLimits, RemoteFile, make_plan, scan_local
from termgrade.publish.errors import PublishError
from termgrade.publish.files import LocalFile
from termgrade.publish.journal import PublishJournal
from termgrade.publish.retry import call_with_retries
from termgrade.publish.validation import ValidationOutcome, check_staged_repo, library_validator
from termgrade.validate import ValidationFinding, ValidationReport
from tests.support.hub_fixtures import hf_home  # noqa: F401


def tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def regular(item: LocalFile) -> RemoteFile:
    return RemoteFile(item.path, item.size, item.git_oid, None)


def large(item: LocalFile) -> RemoteFile:
    return RemoteFile(item.path, item.size, "0" * 40, item.sha256)


def test_local_ids_match_git_and_lfs(tmp_path: Path) -> None:
    data = b"hello world\n" * 1000
    local = scan_local(tree(tmp_path, {"a/b.txt": data}))["a/b.txt"]
    assert local.git_oid == git_hash(data)
    assert local.sha256 == hashlib.sha256(data).hexdigest() and local.size == len(data)


def test_scan_skips_caches_and_refuses_symlinks(tmp_path: Path) -> None:
    tree(tmp_path, {"a.txt": b"a", ".git/HEAD": b"ref", "x/__pycache__/m.pyc": b"\0"})
    assert list(scan_local(tmp_path)) == ["a.txt"]
    (tmp_path / "link").symlink_to(tmp_path / "a.txt")
    with pytest.raises(PublishError, match="symlinks cannot be published"):
        scan_local(tmp_path)


def test_plan_adds_changes_deletes_and_keeps_gitattributes(tmp_path: Path) -> None:
    local = scan_local(tree(tmp_path, {"same.txt": b"1", "same.parquet": b"\0p",
                                       "changed.txt": b"new", "changed.parquet": b"\0new",
                                       "added.txt": b"+"}))
    remote = {
        "same.txt": regular(local["same.txt"]),
        "same.parquet": large(local["same.parquet"]),
        "changed.txt": RemoteFile("changed.txt", 3, git_hash(b"old"), None),
        "changed.parquet": RemoteFile("changed.parquet", 4, "0" * 40, "f" * 64),
        "stale/old.txt": RemoteFile("stale/old.txt", 1, "1" * 40, None),
        ".gitattributes": RemoteFile(".gitattributes", 10, "2" * 40, None),
    }
    plan = make_plan(local, remote, "c" * 40)
    assert [f.path for f in plan.adds] == ["added.txt"]
    assert [f.path for f in plan.changes] == ["changed.parquet", "changed.txt"]
    assert plan.deletes == ["stale/old.txt"]
    assert plan.unchanged == 2 and plan.base_commit == "c" * 40
    assert plan.lines()[0] == "+ added.txt (1 B)" and plan.lines()[-1] == "- stale/old.txt"


def test_same_size_different_content_is_a_change(tmp_path: Path) -> None:
    local = scan_local(tree(tmp_path, {"a.txt": b"abc"}))
    plan = make_plan(local, {"a.txt": RemoteFile("a.txt", 3, git_hash(b"xyz"), None)}, None)
    assert [f.path for f in plan.changes] == ["a.txt"]


def test_an_empty_plan_against_an_identical_remote(tmp_path: Path) -> None:
    local = scan_local(tree(tmp_path, {"a.txt": b"a", "b/c.bin": b"\0c"}))
    plan = make_plan(local, {p: regular(f) for p, f in local.items()}, "h" * 40)
    assert plan.empty and plan.unchanged == 2 and plan.chunks(CommitLimits()) == []


def test_chunks_respect_both_limits_and_cover_everything(tmp_path: Path) -> None:
    files = {f"f{i:02d}.bin": bytes(100 * (i % 3 + 1)) for i in range(20)}
    local = scan_local(tree(tmp_path, files))
    remote = {f"gone{i}.txt": RemoteFile(f"gone{i}.txt", 1, "1" * 40, None) for i in range(5)}
    plan = make_plan(local, remote, None)
    chunks = plan.chunks(CommitLimits(max_ops=6, max_bytes=1000))
    assert all(c.n_ops <= 6 and c.bytes <= 1000 for c in chunks)
    assert sorted(f.path for c in chunks for f in c.uploads) == sorted(files)
    assert sorted(p for c in chunks for p in c.deletes) == sorted(remote)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert len(plan.chunks(CommitLimits())) == 1


def _http_error(status: int, retry_after: str | None = None) -> HfHubHTTPError:
    headers = {"Retry-After": retry_after} if retry_after else {}
    response = httpx2.Response(status, headers=headers,
                               request=httpx2.Request("POST", "http://hub/api/x/commit/main"))
    return HfHubHTTPError(f"{status} error", response=response)


def test_retries_back_off_exponentially_then_give_up() -> None:
    sleeps: list[float] = []
    events: list[RetryEvent] = []
    calls = 0

    def always_503() -> None:
        nonlocal calls
        calls += 1
        raise _http_error(503)

    policy = RetryPolicy(attempts=4, base_s=1.0, max_s=3.0, sleep=sleeps.append)
    with pytest.raises(HfHubHTTPError):
        call_with_retries("commit", always_503, policy, on_retry=events.append)
    assert calls == 4 and sleeps == [1.0, 2.0, 3.0]
    assert [e.attempt for e in events] == [1, 2, 3]


def test_retry_after_is_honoured_and_client_errors_are_not_retried() -> None:
    sleeps: list[float] = []
    answers = [_http_error(429, "5"), "done"]

    def flaky() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert call_with_retries("x", flaky, RetryPolicy(sleep=sleeps.append)) == "done"
    assert sleeps == [5.0]

    def forbidden() -> None:
        raise _http_error(403)

    with pytest.raises(HfHubHTTPError):
        call_with_retries("x", forbidden, RetryPolicy(sleep=sleeps.append))
    assert sleeps == [5.0]


def test_before_retry_can_find_the_work_already_done() -> None:
    def lost_response() -> str:
        raise _http_error(502)

    found = call_with_retries("create PR", lost_response, RetryPolicy(sleep=lambda s: None),
                              before_retry=lambda: "the PR it opened")
    assert found == "the PR it opened"


def test_journal_round_trip_and_version_check(tmp_path: Path) -> None:
    path = PublishJournal.path_for(tmp_path, "dataset", "org/name", "refs/pr/3")
    assert path == tmp_path / "publish/datasets/org/name@refs%2Fpr%2F3.json"
    journal = PublishJournal(path, "org/name", "dataset", "main", "d" * 64, pr_num=3)
    journal.record_chunk(0, "a" * 40, 12)
    loaded = PublishJournal.load(path)
    assert loaded is not None and loaded.pr_num == 3 and loaded.chunks[0].n_ops == 12
    path.write_text(json.dumps({**json.loads(path.read_text()), "schema_version": 99}))
    with pytest.raises(PublishError,
                       match=r"(?s)format '99' is not supported.*upgrade TermGrade"):
        PublishJournal.load(path)


def test_validation_refusal_lists_every_problem(tmp_path: Path) -> None:
    def bad(root: Path) -> ValidationOutcome:
        return ValidationOutcome(False, ["card: README.md: no configs", "rows: x.parquet: bad"])

    with pytest.raises(PublishError) as err:
        check_staged_repo(tmp_path, bad)
    assert "no configs" in str(err.value) and "x.parquet: bad" in str(err.value)
    assert "termgrade validate" in str(err.value)


def test_the_default_validator_is_termgrade_validate(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import termgrade.validate

    seen: list[Path] = []

    def fake(root: Path) -> ValidationReport:
        seen.append(root)
        report = ValidationReport(root=str(root))
        report.add(ValidationFinding("archive", "data/tasks/unseen-00000-of-00001.parquet",
                           "archive_sha256 does not match", row=2, field="archive_sha256"))
        return report

    monkeypatch.setattr(termgrade.validate, "validate_repo", fake)
    outcome = library_validator(tmp_path)
    assert seen == [tmp_path] and not outcome.ok
    assert outcome.problems == ["archive: data/tasks/unseen-00000-of-00001.parquet row 2 "
                                "[archive_sha256]: archive_sha256 does not match"]
    monkeypatch.setattr(termgrade.validate, "validate_repo",
                        lambda root: ValidationReport(root=str(root)))
    assert library_validator(tmp_path) == ValidationOutcome(True, [])
