#!/usr/bin/env bash
set -euo pipefail
cat > /app/jobrunner <<'PY'
#!/usr/bin/env python3
"""jobrunner: run shell commands as jobs with a worker limit; HTTP API on 127.0.0.1."""

import argparse
import collections
import json
import os
import signal
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

FINAL = {"succeeded", "failed", "timed_out", "cancelled", "interrupted"}


class Runner:
    def __init__(self, state_dir, workers):
        self.dir = os.path.abspath(state_dir)
        self.jobs_dir = os.path.join(self.dir, "jobs")
        os.makedirs(self.jobs_dir, exist_ok=True)
        self.workers = workers
        self.lock = threading.Condition()
        self.jobs = {}            # id(int) -> dict
        self.procs = {}           # id -> Popen
        self.queue = collections.deque()
        self.next_id = 1
        self._load()
        for _ in range(workers):
            threading.Thread(target=self._work, daemon=True).start()

    # -- persistence --
    def _job_dir(self, jid):
        return os.path.join(self.jobs_dir, str(jid))

    def _save(self, job):
        path = os.path.join(self._job_dir(int(job["id"])), "job.json")
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".job-")
        with os.fdopen(fd, "w") as fh:
            json.dump(job, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    def _load(self):
        counter = os.path.join(self.dir, "next_id")
        if os.path.exists(counter):
            with open(counter) as fh:
                self.next_id = int(fh.read().strip() or 1)
        found = []
        for name in os.listdir(self.jobs_dir):
            path = os.path.join(self.jobs_dir, name, "job.json")
            if name.isdigit() and os.path.exists(path):
                with open(path) as fh:
                    found.append(json.load(fh))
        for job in sorted(found, key=lambda j: int(j["id"])):
            jid = int(job["id"])
            self.next_id = max(self.next_id, jid + 1)
            if job["state"] == "running":
                job["state"], job["exit_code"] = "interrupted", None
                self._save(job)
            elif job["state"] == "queued":
                self.queue.append(jid)
            self.jobs[jid] = job

    def _bump_counter(self):
        path = os.path.join(self.dir, "next_id")
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".next-")
        with os.fdopen(fd, "w") as fh:
            fh.write(str(self.next_id))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    # -- API operations --
    def submit(self, cmd, timeout, env):
        with self.lock:
            jid = self.next_id
            self.next_id += 1
            self._bump_counter()
            os.makedirs(self._job_dir(jid), exist_ok=True)
            job = {"id": str(jid), "cmd": cmd, "state": "queued", "exit_code": None,
                   "timeout": timeout, "env": env}
            self._save(job)
            self.jobs[jid] = job
            self.queue.append(jid)
            self.lock.notify()
            return dict(job)

    def get(self, jid):
        with self.lock:
            job = self.jobs.get(jid)
            return dict(job) if job else None

    def listing(self, state=None):
        with self.lock:
            return [dict(self.jobs[j]) for j in sorted(self.jobs)
                    if state is None or self.jobs[j]["state"] == state]

    def health(self):
        with self.lock:
            states = [j["state"] for j in self.jobs.values()]
            return {"workers": self.workers, "running": states.count("running"),
                    "queued": states.count("queued")}

    def cancel(self, jid):
        with self.lock:
            job = self.jobs.get(jid)
            if job is None:
                return None, 404
            if job["state"] in FINAL:
                return dict(job), 409
            if job["state"] == "queued":
                job["state"] = "cancelled"
                self._save(job)
                return dict(job), 200
            job["cancel"] = True
            proc = self.procs.get(jid)
            if proc is not None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            while job["state"] == "running":
                self.lock.wait(0.05)
            return dict(job), 200

    def output_path(self, jid, stream):
        return os.path.join(self._job_dir(jid), stream)

    # -- workers --
    def _work(self):
        while True:
            with self.lock:
                while True:
                    while not self.queue:
                        self.lock.wait()
                    jid = self.queue.popleft()
                    job = self.jobs[jid]
                    if job["state"] == "queued":
                        break
                workdir = self._job_dir(jid)
                os.makedirs(workdir, exist_ok=True)
                out = open(os.path.join(workdir, "stdout"), "wb")
                err = open(os.path.join(workdir, "stderr"), "wb")
                env = {**os.environ, **(job.get("env") or {})}
                try:
                    proc = subprocess.Popen(["/bin/sh", "-c", job["cmd"]], cwd=workdir, env=env,
                                            stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                            start_new_session=True)
                except OSError:
                    out.close()
                    err.close()
                    job["state"], job["exit_code"] = "failed", 127
                    self._save(job)
                    self.lock.notify_all()
                    continue
                self.procs[jid] = proc
                job["state"] = "running"
                self._save(job)
            timed_out = False
            try:
                code = proc.wait(timeout=job["timeout"])
            except subprocess.TimeoutExpired:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                code = proc.wait()
            try:
                os.killpg(proc.pid, signal.SIGKILL)   # leftover background children
            except (ProcessLookupError, PermissionError):
                pass
            out.close()
            err.close()
            with self.lock:
                del self.procs[jid]
                if job.get("cancel"):
                    job["state"], job["exit_code"] = "cancelled", None
                elif timed_out:
                    job["state"], job["exit_code"] = "timed_out", None
                else:
                    code = 128 - code if code < 0 else code
                    job["state"], job["exit_code"] = ("succeeded" if code == 0 else "failed"), code
                job.pop("cancel", None)
                self._save(job)
                self.lock.notify_all()


def public(job):
    return {k: job[k] for k in ("id", "cmd", "state", "exit_code", "timeout")}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj=None, raw=None, ctype="application/json"):
        body = raw if raw is not None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, message):
        self.reply(status, {"error": message})

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def dispatch(self):
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        query = parse_qs(url.query)
        data = self.body() if self.command in ("POST", "PUT", "PATCH") else b""
        m = self.command
        if parts == ["health"]:
            return self.reply(200, runner.health()) if m == "GET" else self.error(405, "method not allowed")
        if parts == ["jobs"]:
            if m == "GET":
                state = query.get("state", [None])[0]
                return self.reply(200, {"jobs": [public(j) for j in runner.listing(state)]})
            if m == "POST":
                return self.create(data)
            return self.error(405, "method not allowed")
        if len(parts) >= 2 and parts[0] == "jobs" and len(parts) <= 3:
            jid = int(parts[1]) if parts[1].isdigit() and parts[1] == str(int(parts[1])) else None
            job = runner.get(jid) if jid is not None else None
            if len(parts) == 3 and parts[2] not in ("output", "cancel"):
                return self.error(404, "not found")
            if job is None:
                return self.error(404, "no such job")
            if len(parts) == 2:
                return self.reply(200, public(job)) if m == "GET" else self.error(405, "method not allowed")
            if parts[2] == "output":
                if m != "GET":
                    return self.error(405, "method not allowed")
                stream = query.get("stream", ["stdout"])[0]
                if stream not in ("stdout", "stderr"):
                    return self.error(400, "stream must be stdout or stderr")
                try:
                    with open(runner.output_path(jid, stream), "rb") as fh:
                        raw = fh.read()
                except FileNotFoundError:
                    raw = b""
                return self.reply(200, raw=raw, ctype="text/plain")
            if m != "POST":
                return self.error(405, "method not allowed")
            job, status = runner.cancel(jid)
            return self.reply(status, public(job)) if status != 409 else self.error(409, "job already finished")
        return self.error(404, "not found")

    def create(self, data):
        try:
            req = json.loads(data or b"null")
        except ValueError:
            return self.error(400, "body is not JSON")
        if not isinstance(req, dict):
            return self.error(400, "body must be a JSON object")
        cmd, timeout, env = req.get("cmd"), req.get("timeout", 30), req.get("env", {})
        if not isinstance(cmd, str) or not cmd:
            return self.error(400, "cmd must be a non-empty string")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            return self.error(400, "timeout must be a number > 0")
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            return self.error(400, "env must map strings to strings")
        return self.reply(201, public(runner.submit(cmd, timeout, env)))

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = dispatch


runner = None


def main():
    global runner
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--workers", type=int, required=True)
    args = ap.parse_args()
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    runner = Runner(args.state, args.workers)
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.request_queue_size = 128
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
PY
chmod +x /app/jobrunner
