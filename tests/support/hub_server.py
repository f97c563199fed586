"""A test stand-in for the Hugging Face Hub, on loopback, for tests and publish rehearsals.

Point the real client at it with ``HF_ENDPOINT=http://127.0.0.1:<port>``. It serves the
endpoints ``huggingface_hub`` and ``datasets`` really call (repo create and info, preupload,
NDJSON commit, LFS batch/upload/verify, tree with ``recursive`` / ``expand`` and cursor
pages, paths-info, resolve with ``X-Repo-Commit`` / ``ETag`` / ``X-Linked-*`` and ranges,
refs, commits, tags, branches, pull requests and merge) from
:class:`~tests.support.hub_store.HubStore`. Any other request gets HTTP 501 and an
error log line naming the method and path, and is kept in :attr:`HubServer.unhandled`.

Faults on demand (:meth:`HubServer.inject`, or ``POST /__termgrade/faults`` with the same
fields as JSON), each for ``times`` matching requests: answer with a status instead (429
with ``Retry-After``, 503, ...); make a foreign commit on the target branch first
(``action="foreign_commit"``) so the request's ``parentCommit`` is stale and the real
412 check fires; or apply the request and answer an error anyway
(``action="lost_response"``).

What it cannot prove: the Xet upload/download path (never offered: uploads that would use
Xet hit an unhandled endpoint), the dataset viewer / parquet conversion, the Hub's
real rate limits and quotas, its size limits, and its exact merge semantics.

Run from the checkout's root: ``python -m tests.support.hub_server --port 8765 --root /tmp/hub``.
"""

from __future__ import annotations

import argparse
import logging
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support import hub_read, hub_write
from tests.support.hub_http import REPO, Context, Reply, Request, match
from tests.support.hub_store import HubError, HubStore, Op

LOG = logging.getLogger("tests.support.hub_server")
_ROUTE_MODULES = (hub_read, hub_write)  # importing them registers their routes


@dataclass
class Fault:
    path: str
    """Regex searched in the request path (e.g. ``/commit/``)."""
    status: int = 503
    method: str | None = None
    times: int = 1
    retry_after: int | None = None
    action: str = "status"
    """``status``: answer ``status`` instead of serving; ``foreign_commit``: commit to the
    target branch first, then serve (the request's parent is stale); ``lost_response``:
    serve, then answer ``status`` anyway (the change landed, the client never heard)."""


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    status: int


class HubServer:
    """The server and its store; a context manager that runs it on a daemon thread."""

    def __init__(self, root: Path, *, host: str = "127.0.0.1", port: int = 0,
                 context: dict[str, Any] | None = None) -> None:
        self.ctx = Context(HubStore(root), **(context or {}))
        self.faults: list[Fault] = []
        self.requests: list[Seen] = []
        self.unhandled: list[str] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), _make_handler(self))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def store(self) -> HubStore:
        return self.ctx.store

    def inject(self, fault: Fault) -> None:
        with self._lock:
            self.faults.append(fault)

    def count(self, method: str, pattern: str, status: int | None = None) -> int:
        return sum(1 for seen in self.requests if seen.method == method
                   and re.search(pattern, seen.path) and status in (None, seen.status))

    def start(self) -> HubServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ---- request handling ----------------------------------------------------------------
    def take_fault(self, req: Request) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and (fault.method in (None, req.method)) \
                        and re.search(fault.path, req.path):
                    fault.times -= 1
                    return fault
        return None

    def _foreign_commit(self, req: Request) -> None:
        found = re.search(f"/api/{REPO}/commit/(?P<rev>[^/]+)", req.path)
        if found is None:
            raise HubError(500, "foreign_commit faults only apply to commit requests")
        repo_type = {"models": "model", "datasets": "dataset", "spaces": "space"}[found["type"]]
        repo = self.store.get_repo(repo_type, unquote(found["repo"]))
        marker = f"foreign change {len(self.requests)}\n".encode()
        self.store.commit(repo, unquote(found["rev"]), [Op("file", "FOREIGN.md", marker)],
                          title="A concurrent writer", description="", parent=None,
                          create_pr=False)

    def handle(self, req: Request) -> Reply:
        if req.path == "/__termgrade/faults" and req.method == "POST":
            self.inject(Fault(**req.json()))
            return Reply.json({"faults": len(self.faults)})
        fault = self.take_fault(req)
        if fault is not None and fault.action == "status":
            headers = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
            return Reply.error(HubError(fault.status, f"injected fault {fault.status}"), **headers)
        found = match(req.method, req.path)
        if found is None:
            line = f"hub_server: no handler for {req.method} {req.path} (HTTP 501)"
            LOG.error(line)
            self.unhandled.append(f"{req.method} {req.path}")
            return Reply.json({"error": line}, 501)
        func, groups = found
        try:
            if fault is not None and fault.action == "foreign_commit":
                self._foreign_commit(req)
            reply = func(self.ctx, req, groups)
            if fault is not None and fault.action == "lost_response" and reply.status < 400:
                return Reply.error(HubError(fault.status, "injected: applied, response lost"))
            return reply
        except HubError as err:
            return Reply.error(err)
        except (KeyError, ValueError, TypeError) as exc:
            return Reply.json({"error": f"bad request: {exc!r}"}, 400)
        except Exception as exc:  # a bug in the server itself: loud, and a 500 to the client
            LOG.exception("hub_server: %s %s crashed", req.method, req.path)
            return Reply.json({"error": f"server error: {exc!r}"}, 500)


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


def _header_value(value: str) -> str:
    flat = value.replace("\r", " ").replace("\n", " ")
    return flat.encode("latin-1", "replace").decode("latin-1")


def _make_handler(server: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            req = Request(self.command, parts.path, parse_qs(parts.query, keep_blank_values=True),
                          {k.lower(): v for k, v in self.headers.items()}, _read_body(self),
                          f"http://{self.headers.get('Host') or server.url[7:]}")
            reply = server.handle(req)
            server.requests.append(Seen(req.method, req.path, reply.status))
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, _header_value(value))
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)

        do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            LOG.debug("%s " + format, self.address_string(), *args)

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--root", type=Path, required=True, help="where repos are stored")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    server = HubServer(args.root, host=args.host, port=args.port)
    print(f"serving a Hub on {server.url} (HF_ENDPOINT={server.url}), repos in {args.root}",
          flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()


if __name__ == "__main__":
    main()
