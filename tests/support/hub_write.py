"""Test stand-in: write routes of the loopback Hub: create, validate-yaml, preupload, LFS,
commit, refs, PRs.

The commit endpoint takes the NDJSON ``huggingface_hub`` streams (a ``header`` line, then
``file`` / ``lfsFile`` / ``deletedFile`` / ``deletedFolder`` lines) and answers 412 when
``parentCommit`` is not the head of the target revision, as the Hub does. LFS uses the
"basic" transfer: the batch answer points at ``/__lfs/upload/<oid>`` on this server,
where the Hub would hand out signed storage URLs. Xet is never offered.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import re
from typing import Any

import yaml

from tests.support.hub_http import REPO, WEB_REPO, Context, Reply, Request, repo_of, route
from tests.support.hub_store import Commit, HubError, Op


def _check_path(path: str) -> str:
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in path.split("/")):
        raise HubError(400, f"Invalid path in commit: {path!r}")
    return path


@route("POST", "/api/repos/create")
def create_repo(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    if not req.authorized:
        raise HubError(401, "Invalid username or password.")
    body = req.json()
    repo_type = body.get("type") or "model"
    repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") \
        else f"termgrade-test/{body['name']}"
    private = bool(body.get("private")) or body.get("visibility") == "private"
    prefix = "" if repo_type == "model" else f"{repo_type}s/"
    url = f"{req.base_url}/{prefix}{repo_id}"
    try:
        ctx.store.create_repo(repo_type, repo_id, private=private)
    except HubError as err:  # the Hub's 409 names the existing repo's URL
        return Reply.json({"error": err.message, "url": url}, err.status,
                          **{"X-Error-Message": err.message})
    return Reply.json({"url": url, "name": repo_id, "id": repo_id})


def _front_matter(content: str) -> Any:
    found = re.match(r"^---\n(.*?)\n---\n", content, re.S)
    return yaml.safe_load(found.group(1)) if found else None


@route("POST", "/api/validate-yaml")
def validate_yaml(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    try:
        data = _front_matter(req.json().get("content", ""))
    except yaml.YAMLError as exc:
        return Reply.json({"error": "Invalid YAML", "errors": [{"message": str(exc)}]}, 400)
    if data is not None and not isinstance(data, dict):
        return Reply.json({"error": "Invalid metadata",
                           "errors": [{"message": "metadata must be a mapping"}]}, 400)
    return Reply.json({"errors": [], "warnings": []})


def _lfs_patterns(ctx: Context, commit: Commit) -> list[str]:
    entry = commit.tree.get(".gitattributes")
    if entry is None:
        return []
    lines = ctx.store.read_object(entry.sha256).decode("utf-8", "replace").splitlines()
    return [line.split()[0] for line in lines if "filter=lfs" in line and line.split()]


@route("POST", f"/api/{REPO}/preupload/(?P<rev>[^/]+)")
def preupload(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo = repo_of(ctx, req, groups, write=True)
    commit = ctx.store.get_commit(repo, ctx.store.resolve(repo, groups["rev"]))
    patterns = _lfs_patterns(ctx, commit)
    out = []
    for item in req.json()["files"]:
        path = _check_path(item["path"])
        sample = base64.b64decode(item.get("sample", ""))
        lfs = (item["size"] > ctx.lfs_threshold or b"\0" in sample
               or any(fnmatch.fnmatch(path.rsplit("/", 1)[-1], p) or fnmatch.fnmatch(path, p)
                      for p in patterns))
        remote = commit.tree.get(path)
        oid = None if remote is None else (remote.sha256 if remote.lfs else remote.oid)
        out.append({"path": path, "uploadMode": "lfs" if lfs else "regular",
                    "shouldIgnore": False, "oid": oid})
    return Reply.json({"files": out, "commitOid": commit.oid})


@route("POST", f"/{WEB_REPO}\\.git/info/lfs/objects/batch")
def lfs_batch(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo_of(ctx, req, groups, write=True)
    body = req.json()
    if body.get("operation") != "upload":
        raise HubError(400, "only the upload operation is served")
    objects = []
    for obj in body["objects"]:
        item: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
        if not ctx.store.has_object(obj["oid"]):
            item["actions"] = {
                "upload": {"href": f"{req.base_url}/__lfs/upload/{obj['oid']}"},
                "verify": {"href": f"{req.base_url}/__lfs/verify"},
            }
        objects.append(item)
    return Reply(200, json.dumps({"transfer": "basic", "objects": objects}).encode(),
                 {"Content-Type": "application/vnd.git-lfs+json"})


@route("PUT", "/__lfs/upload/(?P<oid>[0-9a-f]{64})")
def lfs_upload(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    if hashlib.sha256(req.body).hexdigest() != groups["oid"]:
        raise HubError(400, f"uploaded bytes do not hash to {groups['oid']}")
    ctx.store.put_object(req.body)
    return Reply(200)


@route("POST", "/__lfs/verify")
def lfs_verify(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    body = req.json()
    if not ctx.store.has_object(body["oid"]):
        raise HubError(404, f"LFS object {body['oid']} not found")
    if len(ctx.store.read_object(body["oid"])) != body["size"]:
        raise HubError(422, f"LFS object {body['oid']} has the wrong size")
    return Reply.json({})


def _parse_commit(body: bytes) -> tuple[dict[str, Any], list[Op]]:
    header: dict[str, Any] | None = None
    ops: list[Op] = []
    for line in body.splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        key, value = item["key"], item["value"]
        if key == "header":
            header = value
        elif key == "file":
            if value.get("encoding") != "base64":
                raise HubError(400, "file content must be base64")
            ops.append(Op("file", _check_path(value["path"]),
                          content=base64.b64decode(value["content"])))
        elif key == "lfsFile":
            ops.append(Op("lfsFile", _check_path(value["path"]), sha256=value["oid"],
                          size=int(value.get("size", -1))))
        elif key in ("deletedFile", "deletedFolder"):
            ops.append(Op(key, _check_path(value["path"].rstrip("/"))))
        else:
            raise HubError(400, f"unknown commit line {key!r}")
    if header is None or not header.get("summary"):
        raise HubError(400, "commit payload has no header with a summary")
    return header, ops


@route("POST", f"/api/{REPO}/commit/(?P<rev>[^/]+)")
def commit(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo = repo_of(ctx, req, groups, write=True)
    header, ops = _parse_commit(req.body)
    done, pr = ctx.store.commit(repo, groups["rev"], ops, title=header["summary"],
                               description=header.get("description", ""),
                               parent=header.get("parentCommit"), create_pr=req.flag("create_pr"))
    web = f"{req.base_url}/{repo.url_prefix}{repo.id}"
    return Reply.json({"success": True, "commitOid": done.oid,
                       "commitUrl": f"{web}/commit/{done.oid}",
                       "pullRequestUrl": f"{web}/discussions/{pr.num}" if pr else None,
                       "hookOutput": ""})


@route("POST", f"/api/{REPO}/tag/(?P<rev>[^/]+)")
def create_tag(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo = repo_of(ctx, req, groups, write=True)
    ctx.store.create_tag(repo, req.json()["tag"], groups["rev"])
    return Reply.json({})


@route("DELETE", f"/api/{REPO}/tag/(?P<tag>[^/]+)")
def delete_tag(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    ctx.store.delete_tag(repo_of(ctx, req, groups, write=True), groups["tag"])
    return Reply.json({})


@route("POST", f"/api/{REPO}/branch/(?P<branch>[^/]+)")
def create_branch(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo = repo_of(ctx, req, groups, write=True)
    ctx.store.create_branch(repo, groups["branch"], req.json().get("startingPoint"))
    return Reply.json({})


@route("POST", f"/api/{REPO}/discussions")
def create_discussion(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo = repo_of(ctx, req, groups, write=True)
    body = req.json()
    if not body.get("pullRequest"):
        raise HubError(400, "this server only keeps pull requests, not plain discussions")
    pr = ctx.store.create_pr(repo, body["title"], body.get("description") or "")
    return Reply.json({"num": pr.num, "pullRequest": True})


@route("POST", f"/api/{REPO}/discussions/(?P<num>\\d+)/merge")
def merge(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    ctx.store.merge_pr(repo_of(ctx, req, groups, write=True), int(groups["num"]))
    return Reply.json({})


@route("POST", f"/api/{REPO}/discussions/(?P<num>\\d+)/status")
def status(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    new = req.json()["status"]
    if new not in ("open", "closed"):
        raise HubError(400, f"status must be open or closed, not {new!r}")
    ctx.store.set_pr_status(repo_of(ctx, req, groups, write=True), int(groups["num"]), new)
    return Reply.json({"newStatus": {"id": "status", "type": "status-change",
                                     "createdAt": "2024-01-01T00:00:00.000Z",
                                     "author": {"name": "termgrade-test"},
                                     "data": {"status": new}}})
