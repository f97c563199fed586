"""The viewer's HTTP server: the standard library's, on 127.0.0.1 only.

Every answer is rendered from the in-memory index; a trial page reads one line of its
trial file. Pages are served with a Content-Security-Policy that allows no script, so even
a page that failed to escape agent output could not run it.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from termgrade.view import api
from termgrade.view.errors import PageNotFound
from termgrade.view.filters import Filters
from termgrade.view.html import CSP, esc, page
from termgrade.view.index import RunIndex
from termgrade.view.links import ServerLinks
from termgrade.view.pages import cell_page, grid_page, trials_page
from termgrade.view.trial_page import trial_json, trial_page

LOOPBACK = "127.0.0.1"
_ROW = re.compile(r"^/(cell|trial|api/trial)/(\d+)$")


def _page_number(query: dict[str, str]) -> int:
    try:
        return max(1, int(query.get("page", "1")))
    except ValueError:
        return 1


def route(index: RunIndex, path: str, query: dict[str, str]) -> tuple[str, str]:
    """(content type, body) of one GET; :class:`PageNotFound` for anything else."""
    links = ServerLinks()
    filters = Filters.from_query(query)
    number = _page_number(query)
    simple: dict[str, Callable[[], tuple[str, str]]] = {
        "/": lambda: ("text/html", grid_page(index, filters, number, links)),
        "/trials": lambda: ("text/html", trials_page(index, filters, number, links)),
        "/api/summary": lambda: ("application/json", json.dumps(api.summary(index))),
        "/api/grid": lambda: ("application/json",
                              json.dumps(api.grid(index, filters, number))),
        "/api/trials": lambda: ("application/json",
                                json.dumps(api.trial_summaries(index, filters, number))),
    }
    if path in simple:
        return simple[path]()
    match = _ROW.match(path)
    if match is None:
        raise PageNotFound(path)
    kind, row = match.group(1), int(match.group(2))
    limit = len(index.cells) if kind == "cell" else len(index.trials)
    if row >= limit:
        raise PageNotFound(path)
    if kind == "cell":
        return "text/html", cell_page(index, row, links)
    if kind == "trial":
        return "text/html", trial_page(index, row, links)
    return "application/json", trial_json(index, row)


def make_handler(index: RunIndex, *, quiet: bool = True) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "termgrade-view"

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = dict(parse_qsl(url.query))
            try:
                kind, body = route(index, url.path, query)
                status = 200
            except PageNotFound:
                kind, status = "text/html", 404
                body = page("not found", f"<p>No page {esc(url.path)}.</p>")
            except Exception as exc:  # a page that cannot render says why, the server lives
                kind, status = "text/html", 500
                body = page("error", f"<p>This page could not be shown:</p>"
                            f"<pre>{esc(type(exc).__name__)}: {esc(exc)}</pre>")
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            if not quiet:
                super().log_message(format, *args)

    return Handler


class ViewServer:
    """The viewer on ``127.0.0.1:port`` (0: a free port); :attr:`url` says where."""

    def __init__(self, index: RunIndex, port: int = 0, *, quiet: bool = True) -> None:
        self.httpd = ThreadingHTTPServer((LOOPBACK, port), make_handler(index, quiet=quiet))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def start(self) -> ViewServer:
        """Serve in a background thread (tests, scripts); :meth:`stop` ends it."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
