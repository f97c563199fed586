"""Test stand-in: read routes of the loopback Hub: repo info, tree, paths-info, resolve,
refs, commits.

Shapes follow what ``huggingface_hub`` parses (``RepoFile``, ``RepoFolder``,
``DatasetInfo``, ``GitRefs``, ``GitCommitInfo``, ``HfFileMetadata``) and what
``datasets`` / ``HfFileSystem`` need (``expand`` trees, cursor pagination with a
``Link: rel="next"`` header, ranged GETs).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import urlencode

import yaml

from tests.support.hub_http import REPO, WEB_REPO, Context, Reply, Request, repo_of, route
from tests.support.hub_store import Commit, Entry, HubError, Repo, lfs_pointer


def card_data(ctx: Context, commit: Commit) -> dict[str, Any] | None:
    entry = commit.tree.get("README.md")
    if entry is None:
        return None
    text = ctx.store.read_object(entry.sha256).decode("utf-8", "replace")
    found = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    data = yaml.safe_load(found.group(1)) if found else None
    return data if isinstance(data, dict) else None


def file_json(path: str, entry: Entry, last: Commit | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "file", "oid": entry.oid, "size": entry.size, "path": path}
    if entry.lfs:
        out["lfs"] = {"oid": entry.sha256, "size": entry.size,
                      "pointerSize": len(lfs_pointer(entry.sha256, entry.size))}
    if last is not None:
        out["lastCommit"] = {"id": last.oid, "title": last.title, "date": last.date}
    return out


def dir_json(path: str, tree: dict[str, Entry], last: Commit | None = None) -> dict[str, Any]:
    below = sorted((p, e.oid) for p, e in tree.items() if p.startswith(path + "/"))
    out: dict[str, Any] = {"type": "directory", "size": 0, "path": path,
                           "oid": hashlib.sha1(repr(below).encode()).hexdigest()}
    if last is not None:
        out["lastCommit"] = {"id": last.oid, "title": last.title, "date": last.date}
    return out


def _dir_last(lasts: dict[str, Commit], tree: dict[str, Entry], path: str) -> Commit | None:
    below = [lasts[p] for p in tree if p.startswith(path + "/") and p in lasts]
    return max(below, key=lambda c: c.date, default=None)


def _listing(ctx: Context, repo: Repo, commit: Commit, base: str, *, recursive: bool,
             expand: bool) -> list[dict[str, Any]]:
    tree = commit.tree
    prefix = base + "/" if base else ""
    if base and not any(p.startswith(prefix) for p in tree):
        raise HubError(404, f"{base}: not a folder at {commit.oid}", "EntryNotFound")
    lasts = ctx.store.last_commits(repo, commit.oid) if expand else {}
    dirs: set[str] = set()
    files: list[str] = []
    for path in tree:
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix):].split("/")
        if len(parts) == 1:
            files.append(path)
        elif recursive:
            files.append(path)
            dirs.update(prefix + "/".join(parts[:i]) for i in range(1, len(parts)))
        else:
            dirs.add(prefix + parts[0])
    out = [dir_json(d, tree, _dir_last(lasts, tree, d) if expand else None) for d in sorted(dirs)]
    out += [file_json(p, tree[p], lasts.get(p)) for p in sorted(files)]
    return out


def _commit_at(ctx: Context, req: Request, groups: dict[str, str]) -> tuple[Repo, Commit]:
    repo = repo_of(ctx, req, groups)
    oid = ctx.store.resolve(repo, groups.get("rev", "main"))
    return repo, ctx.store.get_commit(repo, oid)


@route("GET", f"/api/{REPO}")
@route("GET", f"/api/{REPO}/revision/(?P<rev>[^/]+)")
def info(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo, commit = _commit_at(ctx, req, groups)
    blobs = req.flag("blobs")
    siblings = []
    for path, entry in commit.tree.items():
        sib: dict[str, Any] = {"rfilename": path}
        if blobs:
            sib.update(size=entry.size, blobId=entry.oid)
            if entry.lfs:
                sib["lfs"] = {"sha256": entry.sha256, "size": entry.size,
                              "pointerSize": len(lfs_pointer(entry.sha256, entry.size))}
        siblings.append(sib)
    data: dict[str, Any] = {
        "_id": hashlib.sha1(repo.id.encode()).hexdigest()[:24], "id": repo.id,
        "author": repo.id.split("/")[0], "sha": commit.oid, "private": repo.private,
        "gated": False, "disabled": False, "downloads": 0, "likes": 0, "tags": [],
        "createdAt": repo.created_at, "lastModified": commit.date, "siblings": siblings,
        "cardData": card_data(ctx, commit),
        "usedStorage": sum(e.size for e in commit.tree.values()),
    }
    expand = req.query.get("expand") or req.query.get("expand[]")
    if expand:
        data = {k: v for k, v in data.items() if k in {"_id", "id", *expand}}
    return Reply.json(data)


@route("GET", f"/api/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?")
def tree(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo, commit = _commit_at(ctx, req, groups)
    expand = req.flag("expand")
    items = _listing(ctx, repo, commit, groups.get("path", "").strip("/"),
                     recursive=req.flag("recursive"), expand=expand)
    size = ctx.expand_page_size if expand else ctx.page_size
    start = int((req.query.get("cursor") or ["0"])[0])
    page = items[start:start + size]
    headers = {}
    if start + size < len(items):
        query = {k: v[-1] for k, v in req.query.items()} | {"cursor": str(start + size)}
        headers["Link"] = f'<{req.base_url}{req.path}?{urlencode(query)}>; rel="next"'
    return Reply.json(page, **headers)


@route("POST", f"/api/{REPO}/paths-info/(?P<rev>[^/]+)")
def paths_info(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo, commit = _commit_at(ctx, req, groups)
    form = req.form()
    expand = (form.get("expand") or ["false"])[-1].lower() == "true"
    lasts = ctx.store.last_commits(repo, commit.oid) if expand else {}
    out = []
    for path in form.get("paths", []):
        path = path.strip("/")
        if path in commit.tree:
            out.append(file_json(path, commit.tree[path], lasts.get(path)))
        elif any(p.startswith(path + "/") for p in commit.tree):
            last = _dir_last(lasts, commit.tree, path) if expand else None
            out.append(dir_json(path, commit.tree, last))
    return Reply.json(out)


@route("GET", f"/{WEB_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)")
def resolve(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    _, commit = _commit_at(ctx, req, groups)
    entry = commit.tree.get(groups["path"])
    if entry is None:
        raise HubError(404, f"{groups['path']} not found at {commit.oid}", "EntryNotFound",
                       {"X-Repo-Commit": commit.oid})
    headers = {"X-Repo-Commit": commit.oid, "Accept-Ranges": "bytes",
               "Content-Type": "application/octet-stream",
               "ETag": f'"{entry.sha256 if entry.lfs else entry.oid}"'}
    if entry.lfs:
        headers.update({"X-Linked-Etag": f'"{entry.sha256}"', "X-Linked-Size": str(entry.size)})
    data = ctx.store.read_object(entry.sha256)
    span = _range(req.headers.get("range"), len(data))
    if span is None:
        return Reply(200, data, headers)
    first, last = span
    headers["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
    return Reply(206, data[first:last + 1], headers)


def _range(header: str | None, size: int) -> tuple[int, int] | None:
    if not header:
        return None
    found = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", header)
    if found is None or not (found.group(1) or found.group(2)):
        raise HubError(416, f"unsupported Range {header!r}")
    if not found.group(1):
        return max(0, size - int(found.group(2))), size - 1
    first = int(found.group(1))
    last = min(int(found.group(2)), size - 1) if found.group(2) else size - 1
    if first >= size and size > 0:
        raise HubError(416, f"Range {header!r} past the end ({size} bytes)")
    return first, last


@route("GET", f"/api/{REPO}/refs")
def refs(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo = repo_of(ctx, req, groups)

    def ref(name: str, full: str, oid: str) -> dict[str, str]:
        return {"name": name, "ref": full, "targetCommit": oid}

    return Reply.json({
        "branches": [ref(b, f"refs/heads/{b}", o) for b, o in repo.branches.items()],
        "tags": [ref(t, f"refs/tags/{t}", o) for t, o in repo.tags.items()],
        "converts": [],
        "pullRequests": [ref(f"refs/pr/{n}", f"refs/pr/{n}", pr.head)
                         for n, pr in repo.prs.items()],
    })


@route("GET", f"/api/{REPO}/commits/(?P<rev>[^/]+)")
def commits(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo, commit = _commit_at(ctx, req, groups)
    return Reply.json([{"id": c.oid, "title": c.title, "message": c.description,
                        "authors": [{"user": "termgrade-test"}], "date": c.date}
                       for c in ctx.store.history(repo, commit.oid)])


@route("GET", f"/api/{REPO}/discussions/(?P<num>\\d+)")
def discussion(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    repo = repo_of(ctx, req, groups)
    pr = repo.prs.get(groups["num"])
    if pr is None:
        raise HubError(404, f"discussion #{groups['num']} not found")
    changes: dict[str, Any] = {"base": f"refs/heads/{pr.base}"}
    if pr.merge_commit:
        changes["mergeCommitId"] = pr.merge_commit
    return Reply.json({
        "num": pr.num, "title": pr.title, "status": pr.status, "isPullRequest": True,
        "createdAt": pr.created_at, "author": {"name": "termgrade-test"},
        "repo": {"name": repo.id, "type": repo.type}, "events": [], "changes": changes,
        "filesWithConflicts": [], "diff": "",
    })


@route("GET", "/api/whoami-v2")
def whoami(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    if not req.authorized:
        raise HubError(401, "Invalid credentials in Authorization header")
    return Reply.json({"type": "user", "name": "termgrade-test", "fullname": "TermGrade test",
                       "orgs": [], "auth": {"type": "access_token",
                                            "accessToken": {"displayName": "test",
                                                            "role": "write"}}})


@route("GET", "/api/agent-harnesses")
def agent_harnesses(ctx: Context, req: Request, groups: dict[str, str]) -> Reply:
    """The client's agent-detection registry; an empty one detects nothing."""
    return Reply.json({"standardEnvVars": [], "harnesses": {}})
