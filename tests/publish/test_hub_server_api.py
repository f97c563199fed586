"""The loopback Hub answers the real huggingface_hub client the way the Hub does."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from huggingface_hub import (
    CommitOperationAdd,
    CommitOperationDelete,
    HfApi,
    constants,
    get_hf_file_metadata,
    hf_hub_download,
    hf_hub_url,
)
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.hf_api import RepoFile, RepoFolder

from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import Fault, HubServer
from tests.support.hub_store import git_blob_oid

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
REPO = "org/data"


@pytest.fixture
def api(hub: HubServer) -> HfApi:  # noqa: F811
    client = HfApi(endpoint=hub.url, token="hf_dummy")
    client.create_repo(REPO, repo_type="dataset")
    return client


def _commit(api: HfApi, files: dict[str, bytes], message: str = "add") -> str:
    ops = [CommitOperationAdd(path, data) for path, data in files.items()]
    return api.create_commit(REPO, ops, commit_message=message, repo_type="dataset").oid


def test_create_repo_twice_is_409_and_exist_ok_passes(api: HfApi) -> None:
    with pytest.raises(HfHubHTTPError) as err:
        api.create_repo(REPO, repo_type="dataset")
    assert err.value.response.status_code == 409
    assert api.create_repo(REPO, repo_type="dataset", exist_ok=True).repo_id == REPO


def test_missing_repo_raises_repository_not_found(hub: HubServer) -> None:  # noqa: F811
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.url).dataset_info("org/nope")


def test_tree_reports_git_blob_ids_and_lfs_sha256(api: HfApi) -> None:
    parquet, text = os.urandom(2000), b"hello\n"
    _commit(api, {"data/x.parquet": parquet, "notes/a.txt": text})
    files = {f.path: f for f in api.list_repo_tree(REPO, recursive=True, repo_type="dataset")
             if isinstance(f, RepoFile)}
    assert set(files) == {".gitattributes", "data/x.parquet", "notes/a.txt"}
    assert files["notes/a.txt"].lfs is None
    assert files["notes/a.txt"].blob_id == git_blob_oid(text)
    lfs = files["data/x.parquet"].lfs
    assert lfs is not None and lfs.sha256 == hashlib.sha256(parquet).hexdigest()
    assert files["data/x.parquet"].size == 2000
    top = list(api.list_repo_tree(REPO, repo_type="dataset"))
    assert {type(x).__name__ for x in top if x.path in ("data", "notes")} == {"RepoFolder"}


def test_paths_info_returns_files_and_folders_and_skips_missing(api: HfApi) -> None:
    _commit(api, {"a/b.txt": b"x"})
    infos = api.get_paths_info(REPO, ["a", "a/b.txt", "nope"], repo_type="dataset", expand=True)
    kinds = {i.path: type(i) for i in infos}
    assert kinds == {"a": RepoFolder, "a/b.txt": RepoFile}
    assert all(i.last_commit is not None for i in infos)


def test_tree_pagination_follows_link_headers(api: HfApi, hub: HubServer) -> None:  # noqa: F811
    hub.ctx.page_size = 3
    _commit(api, {f"f{i:02d}.txt": str(i).encode() for i in range(10)})
    listed = [f.path for f in api.list_repo_tree(REPO, repo_type="dataset")]
    assert len(listed) == 11 and len(set(listed)) == 11
    assert hub.count("GET", "/tree/") == 4


def test_resolve_headers_download_and_ranges(api: HfApi, hub: HubServer) -> None:  # noqa: F811
    data = os.urandom(5000)
    head = _commit(api, {"big.parquet": data})
    url = hf_hub_url(REPO, "big.parquet", repo_type="dataset", endpoint=hub.url)
    meta = get_hf_file_metadata(url, token="hf_dummy")
    assert meta.commit_hash == head
    assert meta.etag == hashlib.sha256(data).hexdigest() and meta.size == 5000
    assert meta.xet_file_data is None
    path = hf_hub_download(REPO, "big.parquet", repo_type="dataset", endpoint=hub.url)
    assert Path(path).read_bytes() == data
    part = httpx2.get(url, headers={"Range": "bytes=10-19"})
    assert part.status_code == 206 and part.content == data[10:20]
    assert part.headers["Content-Range"] == "bytes 10-19/5000"


def test_commit_with_stale_parent_is_412(api: HfApi) -> None:
    first = _commit(api, {"a.txt": b"1"})
    _commit(api, {"a.txt": b"2"})
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(REPO, [CommitOperationAdd("a.txt", b"3")], commit_message="late",
                          repo_type="dataset", parent_commit=first)
    assert err.value.response.status_code == 412


def test_foreign_commit_fault_makes_the_parent_stale(api: HfApi, hub: HubServer) -> None:  # noqa: F811
    head = _commit(api, {"a.txt": b"1"})
    hub.inject(Fault(path="/commit/", action="foreign_commit"))
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(REPO, [CommitOperationAdd("b.txt", b"2")], commit_message="mine",
                          repo_type="dataset", parent_commit=head)
    assert err.value.response.status_code == 412
    assert "FOREIGN.md" in api.list_repo_files(REPO, repo_type="dataset")


def test_status_faults_are_served_then_cleared(api: HfApi, hub: HubServer) -> None:  # noqa: F811
    hub.inject(Fault(path="/commit/", status=429, retry_after=7, times=1))
    with pytest.raises(HfHubHTTPError) as err:
        _commit(api, {"a.txt": b"1"})
    assert err.value.response.status_code == 429
    assert err.value.response.headers["Retry-After"] == "7"
    _commit(api, {"a.txt": b"1"})
    assert hub.count("POST", "/commit/", 429) == 1 and hub.count("POST", "/commit/", 200) == 1


def test_pull_request_commits_and_merge(api: HfApi) -> None:
    _commit(api, {"keep.txt": b"k", "old.txt": b"o"})
    info = api.create_commit(REPO, [CommitOperationDelete("old.txt")], commit_message="pr",
                             repo_type="dataset", create_pr=True)
    assert info.pr_num == 1
    api.create_commit(REPO, [CommitOperationAdd("new.txt", b"n")], commit_message="more",
                      repo_type="dataset", revision="refs/pr/1")
    assert "old.txt" in api.list_repo_files(REPO, repo_type="dataset")
    api.merge_pull_request(REPO, 1, repo_type="dataset")
    assert set(api.list_repo_files(REPO, repo_type="dataset")) == {
        ".gitattributes", "keep.txt", "new.txt"}
    assert api.get_discussion_details(REPO, 1, repo_type="dataset").status == "merged"


def test_tags_and_refs(api: HfApi) -> None:
    head = _commit(api, {"a.txt": b"1"})
    api.create_tag(REPO, tag="v1", repo_type="dataset")
    refs = api.list_repo_refs(REPO, repo_type="dataset")
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1", head)]
    with pytest.raises(HfHubHTTPError):
        api.create_tag(REPO, tag="v1", repo_type="dataset")


def test_unknown_endpoint_is_501_and_logged(hub: HubServer, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811, E501
    response = httpx2.get(f"{hub.url}/api/datasets/org/data/parquet")
    assert response.status_code == 501
    assert hub.unhandled == ["GET /api/datasets/org/data/parquet"]
    assert "no handler for GET /api/datasets/org/data/parquet" in caplog.text
    hub.unhandled.clear()


def test_xet_upload_path_is_refused(api: HfApi, hub: HubServer,  # noqa: F811
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """With Xet left on, an LFS-mode upload asks for a Xet token, which is not served:
    the loopback Hub cannot stand in for the Xet path."""
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    with pytest.raises(Exception, match="501"):
        _commit(api, {"x.parquet": os.urandom(100)})
    assert any("xet-write-token" in line for line in hub.unhandled)
    hub.unhandled.clear()


def test_runs_as_a_module(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.hub_server", "--port", "0",
                             "--root", str(tmp_path / "root")], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://\S+", line).group(0)  # type: ignore[union-attr]
        assert httpx2.get(f"{url}/api/agent-harnesses").json() == {"standardEnvVars": [],
                                                                   "harnesses": {}}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
