"""Where a page links to: query URLs on the server, file names in a static export."""

from __future__ import annotations

from typing import Protocol
from urllib.parse import urlencode

from termgrade.view.filters import Filters


class Links(Protocol):
    static: bool

    def home(self) -> str: ...
    def grid(self, filters: Filters, page: int = 1) -> str: ...
    def trials(self, filters: Filters, page: int = 1) -> str: ...
    def cell(self, row: int) -> str: ...
    def trial(self, row: int) -> str: ...
    def trial_json(self, row: int) -> str: ...


def _with(path: str, params: dict[str, str]) -> str:
    return f"{path}?{urlencode(params)}" if params else path


class ServerLinks:
    """Links of the served viewer: every filter and page is a query parameter."""

    static = False

    def home(self) -> str:
        return "/"

    def grid(self, filters: Filters, page: int = 1) -> str:
        params = filters.query()
        if page > 1:
            params["page"] = str(page)
        return _with("/", params)

    def trials(self, filters: Filters, page: int = 1) -> str:
        params = filters.query()
        if page > 1:
            params["page"] = str(page)
        return _with("/trials", params)

    def cell(self, row: int) -> str:
        return f"/cell/{row}"

    def trial(self, row: int) -> str:
        return f"/trial/{row}"

    def trial_json(self, row: int) -> str:
        return f"/api/trial/{row}"


def static_name(kind: str, filters: Filters, page: int) -> str:
    """``index.html`` for the first unfiltered grid page, else e.g.
    ``grid-band-central-2.html`` (a static export holds pages with at most one filter)."""
    if kind == "grid" and not filters.active() and page == 1:
        return "index.html"
    parts = [kind, *(f"{k}-{v}" for k, v in sorted(filters.query().items())), str(page)]
    safe = "-".join(parts)
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in safe) + ".html"


class StaticLinks:
    """Links between the files of a static export; ``depth`` folders below its root."""

    static = True

    def __init__(self, depth: int = 0) -> None:
        self.up = "../" * depth

    def home(self) -> str:
        return f"{self.up}index.html"

    def grid(self, filters: Filters, page: int = 1) -> str:
        return self.up + static_name("grid", filters, page)

    def trials(self, filters: Filters, page: int = 1) -> str:
        return self.up + static_name("trials", filters, page)

    def cell(self, row: int) -> str:
        return f"{self.up}cell/{row}.html"

    def trial(self, row: int) -> str:
        return f"{self.up}trial/{row}.html"

    def trial_json(self, row: int) -> str:
        return f"{self.up}trial/{row}.json"
