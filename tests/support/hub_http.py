"""Test stand-in: request and reply values shared by the loopback Hub's route modules."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from tests.support.hub_store import HubError, HubStore, Repo

REPO_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}


@dataclass
class Request:
    method: str
    path: str
    """The raw (still percent-encoded) path, without the query string."""
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes
    base_url: str
    """``http://host:port`` as the client addressed us."""

    def json(self) -> Any:
        return json.loads(self.body or b"{}")

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body.decode(), keep_blank_values=True)

    def flag(self, name: str) -> bool:
        values = self.query.get(name) or self.query.get(f"{name}[]") or []
        return bool(values) and values[-1].lower() in {"1", "true", "yes"}

    @property
    def authorized(self) -> bool:
        return self.headers.get("authorization", "").startswith("Bearer ")


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, data: Any, status: int = 200, /, **headers: str) -> Reply:
        return cls(status, json.dumps(data).encode(),
                   {"Content-Type": "application/json", **headers})

    @classmethod
    def error(cls, err: HubError, **headers: str) -> Reply:
        extra = {"X-Error-Message": err.message, **err.headers, **headers}
        if err.code:
            extra["X-Error-Code"] = err.code
        return cls.json({"error": err.message}, err.status, **extra)


@dataclass
class Context:
    """What every route sees: the store and the server's knobs."""

    store: HubStore
    page_size: int = 1000
    """Tree entries per page (the Hub: 1000)."""
    expand_page_size: int = 50
    """Tree entries per page when ``expand=true`` (the Hub: 50)."""
    lfs_threshold: int = 10 * 1024 * 1024
    """Files above this size go through LFS, like the Hub's 10 MB rule."""


Handler = Callable[[Context, Request, dict[str, str]], Reply]
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = []

REPO = r"(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)"
"""``/api/{type}s/{namespace}/{name}``."""
WEB_REPO = r"(?:(?P<type>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+?)"
"""``/[{type}s/]{namespace}/{name}`` as in resolve and LFS URLs."""


def route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    def decorate(func: Handler) -> Handler:
        ROUTES.append((method, re.compile(f"^{pattern}$"), func))
        return func

    return decorate


def match(method: str, path: str) -> tuple[Handler, dict[str, str]] | None:
    for verb, pattern, func in ROUTES:
        found = pattern.match(path)
        if found and (verb == method or (verb == "GET" and method == "HEAD")):
            groups = {k: unquote(v) for k, v in found.groupdict().items() if v is not None}
            return func, groups
    return None


def repo_of(ctx: Context, req: Request, groups: dict[str, str], *, write: bool = False) -> Repo:
    """The repository a route names; 401 without a token for writes and private repos."""
    if write and not req.authorized:
        raise HubError(401, "Invalid username or password.")
    repo_type = REPO_TYPES.get(groups.get("type") or "models", "model")
    repo = ctx.store.get_repo(repo_type, groups["repo"])
    if repo.private and not req.authorized:
        raise HubError(401, f"Repository {repo.id} not found", "RepoNotFound")
    return repo
