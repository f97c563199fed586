import http.client
import json
import os
import socket
import subprocess
import threading
import time

import pytest

SERVER = "/app/kvserver.py"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data):
        self.data = str(data)
        self.port = free_port()
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(["python3", SERVER, "--port", str(self.port), "--data", self.data],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("server exited: " + self.proc.stderr.read().decode()[-2000:])
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise AssertionError("server did not start listening")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def request(self, method, path, body=None, headers=None, conn=None):
        c = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        if conn is None:
            c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data


@pytest.fixture
def srv(tmp_path):
    s = Server(tmp_path / "store.json").start()
    yield s
    s.stop()


def test_server_script_exists():
    assert os.path.isfile(SERVER)


def test_put_creates_then_get(srv):
    status, headers, body = srv.request("PUT", "/kv/alpha", b"hello")
    assert status == 201
    assert headers["etag"] == '"1"'
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body) == {"key": "alpha", "version": 1}
    status, headers, body = srv.request("GET", "/kv/alpha")
    assert (status, body, headers["etag"]) == (200, b"hello", '"1"')
    assert headers["content-type"] == "application/octet-stream"


def test_put_replaces_and_bumps_version(srv):
    srv.request("PUT", "/kv/k", b"v1")
    status, headers, body = srv.request("PUT", "/kv/k", b"v2")
    assert status == 200 and json.loads(body) == {"key": "k", "version": 2} and headers["etag"] == '"2"'
    srv.request("PUT", "/kv/k", b"v3")
    assert srv.request("GET", "/kv/k")[1]["etag"] == '"3"'


def test_binary_and_empty_values(srv):
    blob = bytes(range(256)) * 4 + b"\r\n\x00"
    assert srv.request("PUT", "/kv/bin", blob)[0] == 201
    assert srv.request("GET", "/kv/bin")[2] == blob
    assert srv.request("PUT", "/kv/empty", b"")[0] == 201
    status, headers, body = srv.request("GET", "/kv/empty")
    assert status == 200 and body == b"" and headers["content-length"] == "0"


def test_missing_key_404_json(srv):
    status, headers, body = srv.request("GET", "/kv/nothing")
    assert status == 404
    assert headers["content-type"].startswith("application/json")
    assert "error" in json.loads(body)


def test_delete_and_recreate(srv):
    srv.request("PUT", "/kv/gone", b"x")
    srv.request("PUT", "/kv/gone", b"y")
    status, _, body = srv.request("DELETE", "/kv/gone")
    assert status == 204 and body == b""
    assert srv.request("GET", "/kv/gone")[0] == 404
    assert srv.request("DELETE", "/kv/gone")[0] == 404
    status, headers, body = srv.request("PUT", "/kv/gone", b"z")
    assert status == 201 and json.loads(body)["version"] == 1


def test_list_keys_sorted_with_prefix(srv):
    for k in ["b.2", "a-1", "b.1", "c_3", "B"]:
        srv.request("PUT", f"/kv/{k}", b"1")
    status, headers, body = srv.request("GET", "/kv")
    assert status == 200 and headers["content-type"].startswith("application/json")
    assert json.loads(body) == {"keys": ["B", "a-1", "b.1", "b.2", "c_3"]}
    assert json.loads(srv.request("GET", "/kv?prefix=b.")[2]) == {"keys": ["b.1", "b.2"]}
    assert json.loads(srv.request("GET", "/kv?prefix=zzz")[2]) == {"keys": []}


@pytest.mark.parametrize("path", ["/kv/bad%20key", "/kv/" + "k" * 129, "/kv/a/b", "/kv/", "/kv/caf%C3%A9"],
                         ids=["space", "too-long", "slash", "empty", "non-ascii"])
def test_invalid_keys_400(srv, path):
    assert srv.request("PUT", path, b"x")[0] == 400
    assert srv.request("GET", path)[0] == 400


def test_max_length_key_ok(srv):
    key = "K" * 128
    assert srv.request("PUT", f"/kv/{key}", b"x")[0] == 201


def test_if_match(srv):
    srv.request("PUT", "/kv/cas", b"a")
    assert srv.request("PUT", "/kv/cas", b"b", {"If-Match": '"1"'})[0] == 200
    assert srv.request("PUT", "/kv/cas", b"c", {"If-Match": '"1"'})[0] == 412
    assert srv.request("GET", "/kv/cas")[2] == b"b"
    assert srv.request("PUT", "/kv/missing", b"c", {"If-Match": '"1"'})[0] == 412
    assert srv.request("GET", "/kv/missing")[0] == 404


def test_if_none_match_star(srv):
    assert srv.request("PUT", "/kv/once", b"first", {"If-None-Match": "*"})[0] == 201
    assert srv.request("PUT", "/kv/once", b"second", {"If-None-Match": "*"})[0] == 412
    assert srv.request("GET", "/kv/once")[2] == b"first"


def test_conditional_delete(srv):
    srv.request("PUT", "/kv/d", b"1")
    srv.request("PUT", "/kv/d", b"2")
    assert srv.request("DELETE", "/kv/d", headers={"If-Match": '"1"'})[0] == 412
    assert srv.request("GET", "/kv/d")[2] == b"2"
    assert srv.request("DELETE", "/kv/d", headers={"If-Match": '"2"'})[0] == 204


def test_value_size_limit(srv):
    srv.request("PUT", "/kv/big", b"small")
    assert srv.request("PUT", "/kv/big", b"x" * (1 << 20 | 1))[0] == 413
    assert srv.request("GET", "/kv/big")[2] == b"small"
    assert srv.request("PUT", "/kv/big", b"y" * (1 << 20))[0] == 200
    assert len(srv.request("GET", "/kv/big")[2]) == 1 << 20


def test_method_not_allowed(srv):
    assert srv.request("POST", "/kv/x", b"1")[0] == 405
    assert srv.request("PUT", "/kv", b"1")[0] == 405
    assert srv.request("DELETE", "/kv")[0] == 405


@pytest.mark.parametrize("path", ["/", "/kvx", "/other/thing", "/kv2/a"],
                         ids=["root", "kvx", "other", "kv2"])
def test_unknown_paths_404(srv, path):
    assert srv.request("GET", path)[0] == 404


def test_keep_alive_connection(srv):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=20)
    for i in range(5):
        assert srv.request("PUT", f"/kv/ka{i}", f"v{i}".encode(), conn=conn)[0] == 201
        assert srv.request("GET", f"/kv/ka{i}", conn=conn)[2] == f"v{i}".encode()
    assert srv.request("GET", "/kv/none", conn=conn)[0] == 404
    assert json.loads(srv.request("GET", "/kv?prefix=ka", conn=conn)[2])["keys"] == [f"ka{i}" for i in range(5)]
    conn.close()


def test_persistence_across_restart(tmp_path):
    s = Server(tmp_path / "data.json").start()
    try:
        s.request("PUT", "/kv/p", b"one")
        s.request("PUT", "/kv/p", b"two")
        s.request("PUT", "/kv/raw", bytes([0, 255, 10, 13]))
        s.request("PUT", "/kv/del", b"x")
        s.request("DELETE", "/kv/del")
    finally:
        s.stop()
    assert os.path.getsize(tmp_path / "data.json") > 0
    s2 = Server(tmp_path / "data.json").start()
    try:
        status, headers, body = s2.request("GET", "/kv/p")
        assert (status, body, headers["etag"]) == (200, b"two", '"2"')
        assert s2.request("GET", "/kv/raw")[2] == bytes([0, 255, 10, 13])
        assert s2.request("GET", "/kv/del")[0] == 404
        assert json.loads(s2.request("PUT", "/kv/p", b"three")[2])["version"] == 3
    finally:
        s2.stop()


def test_concurrent_compare_and_set(srv):
    srv.request("PUT", "/kv/race", b"start")
    conns = []
    for _ in range(12):
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        c.connect()
        conns.append(c)
    results = []
    barrier = threading.Barrier(len(conns))

    def worker(i):
        barrier.wait()
        results.append(srv.request("PUT", "/kv/race", f"w{i}".encode(), {"If-Match": '"1"'}, conn=conns[i])[0])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(conns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for c in conns:
        c.close()
    assert sorted(results) == [200] + [412] * (len(conns) - 1)
    assert srv.request("GET", "/kv/race")[1]["etag"] == '"2"'


def test_concurrent_writers_all_persisted(tmp_path):
    s = Server(tmp_path / "c.json").start()
    try:
        conns = []
        for _ in range(12):
            c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
            c.connect()
            conns.append(c)
        failures = []

        def worker(i):
            for j in range(5):
                status = s.request("PUT", f"/kv/t{i}-{j}", f"{i}:{j}".encode(), conn=conns[i])[0]
                if status != 201:
                    failures.append(status)
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        for c in conns:
            c.close()
        assert failures == []
    finally:
        s.stop()
    s2 = Server(tmp_path / "c.json").start()
    try:
        keys = json.loads(s2.request("GET", "/kv?prefix=t")[2])["keys"]
        assert len(keys) == 60
        assert s2.request("GET", "/kv/t7-3")[2] == b"7:3"
    finally:
        s2.stop()
