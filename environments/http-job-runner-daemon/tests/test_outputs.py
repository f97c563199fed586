import http.client
import json
import os
import socket
import subprocess
import time

import pytest

TOOL = "/app/jobrunner"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pattern):
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0


class Daemon:
    def __init__(self, state, workers=3):
        self.state, self.workers = str(state), workers
        self.port = free_port()
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([TOOL, "--port", str(self.port), "--state", self.state,
                                      "--workers", str(self.workers)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("daemon exited: " + self.proc.stderr.read().decode()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise AssertionError("daemon did not start listening")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def call(self, method, path, body=None, raw=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        c.request(method, path, body=payload, headers=headers)
        r = c.getresponse()
        data = r.read()
        ctype = r.getheader("Content-Type") or ""
        c.close()
        if ctype.startswith("application/json"):
            return r.status, json.loads(data)
        return r.status, (ctype, data)

    def submit(self, cmd, **extra):
        status, job = self.call("POST", "/jobs", {"cmd": cmd, **extra})
        assert status == 201, job
        return job

    def wait(self, jid, states=("succeeded", "failed", "timed_out", "cancelled", "interrupted"), limit=15):
        deadline = time.time() + limit
        while time.time() < deadline:
            status, job = self.call("GET", f"/jobs/{jid}")
            assert status == 200
            if job["state"] in states:
                return job
            time.sleep(0.05)
        raise AssertionError(f"job {jid} still {job['state']}")

    def output(self, jid, stream=None):
        status, (ctype, data) = self.call("GET", f"/jobs/{jid}/output" + (f"?stream={stream}" if stream else ""))
        assert status == 200 and ctype.startswith("text/plain")
        return data


@pytest.fixture
def daemon(tmp_path):
    d = Daemon(tmp_path / "state").start()
    yield d
    d.kill()


def test_executable_exists():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_health_initial(daemon):
    assert daemon.call("GET", "/health") == (200, {"workers": 3, "running": 0, "queued": 0})


def test_successful_job(daemon):
    job = daemon.submit("echo hello; echo warn >&2")
    assert job["id"] == "1" and job["state"] == "queued" and job["cmd"] == "echo hello; echo warn >&2"
    assert job["exit_code"] is None and job["timeout"] == 30
    done = daemon.wait("1")
    assert (done["state"], done["exit_code"]) == ("succeeded", 0)
    assert daemon.output("1") == b"hello\n"
    assert daemon.output("1", "stderr") == b"warn\n"


def test_failed_jobs_and_signals(daemon):
    a = daemon.submit("echo out; exit 3")
    b = daemon.submit("kill -9 $$")
    ja, jb = daemon.wait(a["id"]), daemon.wait(b["id"])
    assert (ja["state"], ja["exit_code"]) == ("failed", 3)
    assert daemon.output(a["id"]) == b"out\n"
    assert (jb["state"], jb["exit_code"]) == ("failed", 137)


def test_workdir_env_and_stdin(daemon, tmp_path):
    job = daemon.submit('pwd; echo "$GREETING-$HOME"; echo data > made.txt; cat; echo end',
                        env={"GREETING": "hi there"}, timeout=10)
    assert daemon.wait(job["id"])["state"] == "succeeded"
    workdir = os.path.realpath(tmp_path / "state" / "jobs" / job["id"])
    lines = daemon.output(job["id"]).decode().splitlines()
    assert os.path.realpath(lines[0]) == workdir
    assert lines[1] == f"hi there-{os.environ.get('HOME', '')}"
    assert lines[2] == "end"
    assert open(os.path.join(workdir, "made.txt")).read() == "data\n"


def test_timeout_kills_process_group(daemon):
    job = daemon.submit("sleep 301 & sleep 302; echo never", timeout=1)
    started = time.time()
    done = daemon.wait(job["id"], limit=10)
    assert done["state"] == "timed_out" and done["exit_code"] is None
    assert time.time() - started < 8
    time.sleep(0.3)
    assert not alive("sleep 301") and not alive("sleep 302")
    assert daemon.output(job["id"]) == b""


def test_fractional_timeout_accepted(daemon):
    job = daemon.submit("sleep 303", timeout=0.5)
    assert job["timeout"] == 0.5
    assert daemon.wait(job["id"], limit=8)["state"] == "timed_out"


def test_worker_limit_and_fifo(tmp_path):
    d = Daemon(tmp_path / "st", workers=2).start()
    marks = tmp_path / "marks"
    marks.mkdir()
    try:
        durations = [0.5, 1.6, 0.5, 0.25, 0.25]
        jobs = [d.submit(f"date +%s%N > {marks}/{i + 1}; sleep {s}") for i, s in enumerate(durations)]
        max_running, seen_two = 0, False
        deadline = time.time() + 20
        while time.time() < deadline:
            h = d.call("GET", "/health")[1]
            max_running = max(max_running, h["running"])
            seen_two |= h["running"] == 2
            listed = d.call("GET", "/jobs?state=running")[1]["jobs"]
            assert len(listed) <= 2
            if h["running"] == 0 and h["queued"] == 0:
                break
            time.sleep(0.03)
        assert max_running == 2 and seen_two
        for j in jobs:
            assert d.wait(j["id"])["state"] == "succeeded"
        starts = {i: int((marks / str(i)).read_text()) for i in range(1, 6)}
        order = sorted(starts, key=starts.get)
        assert set(order[:2]) == {1, 2}
        assert order[2:] == [3, 4, 5]
    finally:
        d.kill()


def test_cancel_queued_job(tmp_path):
    d = Daemon(tmp_path / "st", workers=1).start()
    try:
        first = d.submit("sleep 1.2")
        second = d.submit(f"touch {tmp_path}/ran")
        status, job = d.call("POST", f"/jobs/{second['id']}/cancel")
        assert status == 200 and job["state"] == "cancelled"
        assert d.wait(first["id"])["state"] == "succeeded"
        time.sleep(0.5)
        assert d.call("GET", f"/jobs/{second['id']}")[1]["state"] == "cancelled"
        assert not (tmp_path / "ran").exists()
    finally:
        d.kill()


def test_cancel_running_job(daemon):
    job = daemon.submit("sleep 304 & sleep 305")
    daemon.wait(job["id"], states=("running",))
    status, body = daemon.call("POST", f"/jobs/{job['id']}/cancel")
    assert status == 200
    done = daemon.wait(job["id"], limit=5)
    assert done["state"] == "cancelled" and done["exit_code"] is None
    time.sleep(0.3)
    assert not alive("sleep 304") and not alive("sleep 305")


def test_cancel_finished_job_conflict(daemon):
    job = daemon.submit("true")
    daemon.wait(job["id"])
    status, body = daemon.call("POST", f"/jobs/{job['id']}/cancel")
    assert status == 409 and "error" in body
    assert daemon.call("GET", f"/jobs/{job['id']}")[1]["state"] == "succeeded"


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"cmd": ""}', b'{"cmd": 5}', b"{}",
                                 b'{"cmd": "true", "timeout": 0}', b'{"cmd": "true", "timeout": -1}',
                                 b'{"cmd": "true", "timeout": "5"}', b'{"cmd": "true", "env": {"A": 1}}',
                                 b'{"cmd": "true", "env": ["A"]}'],
                         ids=["not-json", "array", "empty-cmd", "int-cmd", "no-cmd", "zero-timeout",
                              "negative-timeout", "string-timeout", "int-env-value", "list-env"])
def test_invalid_submissions(daemon, raw):
    status, body = daemon.call("POST", "/jobs", raw=raw)
    assert status == 400 and "error" in body
    assert daemon.call("GET", "/jobs")[1] == {"jobs": []}


def test_not_found_and_method_not_allowed(daemon):
    assert daemon.call("GET", "/jobs/1")[0] == 404
    assert daemon.call("GET", "/jobs/abc")[0] == 404
    assert daemon.call("POST", "/jobs/7/cancel")[0] == 404
    assert daemon.call("GET", "/nothing")[0] == 404
    assert daemon.call("DELETE", "/jobs")[0] == 405
    job = daemon.submit("true")
    assert daemon.call("DELETE", f"/jobs/{job['id']}")[0] == 405
    assert daemon.call("POST", "/health", {})[0] == 405


def test_listing_sorted_numerically_with_filter(daemon):
    ids = [daemon.submit("exit 1" if i % 3 == 0 else "true")["id"] for i in range(12)]
    for jid in ids:
        daemon.wait(jid)
    listed = daemon.call("GET", "/jobs")[1]["jobs"]
    assert [j["id"] for j in listed] == [str(i) for i in range(1, 13)]
    failed = daemon.call("GET", "/jobs?state=failed")[1]["jobs"]
    assert [j["id"] for j in failed] == ["1", "4", "7", "10"]
    assert all(j["exit_code"] == 1 for j in failed)


def test_large_output_captured(daemon):
    job = daemon.submit("head -c 3000000 /dev/zero | tr '\\0' 'x'; echo; seq 1 20000 >&2")
    assert daemon.wait(job["id"])["state"] == "succeeded"
    out = daemon.output(job["id"])
    assert len(out) == 3000001 and out[:5] == b"xxxxx"
    assert daemon.output(job["id"], "stderr").splitlines()[-1] == b"20000"


def test_restart_recovers_jobs(tmp_path):
    state = tmp_path / "persist"
    d = Daemon(state, workers=1).start()
    try:
        d.submit("echo done")
        d.wait("1")
        d.submit("sleep 4.93")
        d.wait("2", states=("running",))
        d.submit("echo later")
        assert d.call("GET", "/jobs/3")[1]["state"] == "queued"
    finally:
        d.kill()
    d2 = Daemon(state, workers=1).start()
    try:
        j1 = d2.call("GET", "/jobs/1")[1]
        assert (j1["state"], j1["exit_code"], j1["cmd"]) == ("succeeded", 0, "echo done")
        assert d2.output("1") == b"done\n"
        j2 = d2.call("GET", "/jobs/2")[1]
        assert (j2["state"], j2["exit_code"]) == ("interrupted", None)
        assert d2.wait("3")["state"] == "succeeded"
        assert d2.output("3") == b"later\n"
        assert d2.submit("true")["id"] == "4"
    finally:
        d2.kill()
