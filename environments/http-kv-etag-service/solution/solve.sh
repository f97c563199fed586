#!/usr/bin/env bash
set -euo pipefail
cat > /app/kvserver.py <<'PY'
#!/usr/bin/env python3
"""Key-value store over HTTP with versioned ETags and atomic persistence."""

import argparse
import base64
import json
import os
import re
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

KEY = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
MAX_VALUE = 1 << 20


class Store:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.items = {}          # key -> (version, bytes)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                raw = json.load(fh)
            self.items = {k: (v["version"], base64.b64decode(v["value"])) for k, v in raw.items()}

    def save(self):
        data = {k: {"version": ver, "value": base64.b64encode(val).decode()}
                for k, (ver, val) in self.items.items()}
        directory = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".kv-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def etag_matches(header, version):
    if header is None:
        return True
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or f'"{version}"' in tags


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kvserver/1.0"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body=b"", ctype=None, etag=None):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        if etag is not None:
            self.send_header("ETag", f'"{etag}"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status, obj, etag=None):
        self.send(status, json.dumps(obj).encode(), "application/json", etag)

    def error(self, status, message):
        self.send_json(status, {"error": message})

    def drain(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def route(self):
        url = urlsplit(self.path)
        if url.path == "/kv":
            return "list", None, url
        if url.path.startswith("/kv/"):
            return "item", url.path[4:], url
        return None, None, url

    def handle_any(self):
        kind, key, url = self.route()
        method = self.command
        body = self.drain() if method in ("PUT", "POST", "PATCH") else b""
        if kind is None:
            return self.error(404, "not found")
        if kind == "list":
            if method != "GET":
                return self.error(405, "method not allowed")
            prefix = parse_qs(url.query).get("prefix", [""])[0]
            with store.lock:
                keys = sorted(k for k in store.items if k.startswith(prefix))
            return self.send_json(200, {"keys": keys})
        if method not in ("GET", "PUT", "DELETE"):
            return self.error(405, "method not allowed")
        if not KEY.match(key):
            return self.error(400, "invalid key")
        if method == "GET":
            with store.lock:
                item = store.items.get(key)
            if item is None:
                return self.error(404, "not found")
            return self.send(200, item[1], "application/octet-stream", item[0])
        if_match = self.headers.get("If-Match")
        if_none = self.headers.get("If-None-Match")
        if method == "PUT":
            if len(body) > MAX_VALUE:
                return self.error(413, "value too large")
            with store.lock:
                current = store.items.get(key)
                if if_match is not None and (current is None or not etag_matches(if_match, current[0])):
                    return self.error(412, "precondition failed")
                if if_none is not None and if_none.strip() == "*" and current is not None:
                    return self.error(412, "precondition failed")
                version = 1 if current is None else current[0] + 1
                previous = dict(store.items)
                store.items[key] = (version, body)
                try:
                    store.save()
                except OSError:
                    store.items = previous
                    return self.error(500, "could not persist")
            return self.send_json(201 if current is None else 200, {"key": key, "version": version}, version)
        with store.lock:
            current = store.items.get(key)
            if current is None:
                return self.error(404, "not found")
            if if_match is not None and not etag_matches(if_match, current[0]):
                return self.error(412, "precondition failed")
            del store.items[key]
            store.save()
        return self.send(204)

    do_GET = do_PUT = do_DELETE = do_POST = do_PATCH = do_HEAD = do_OPTIONS = handle_any


def main():
    global store
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    store = Store(args.data)
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.serve_forever()


store = None

if __name__ == "__main__":
    main()
PY
chmod +x /app/kvserver.py
