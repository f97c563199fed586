import os
import socket
import subprocess
import threading
import time

import pytest

TOOL = "/app/queued"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, journal):
        self.journal = str(journal)
        self.port = free_port()
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([TOOL, "--port", str(self.port), "--journal", self.journal],
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

    def client(self):
        return Client(self.port)


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.rfile = self.sock.makefile("rb")

    def send(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def line(self):
        raw = self.rfile.readline()
        assert raw.endswith(b"\n"), f"no complete response line: {raw!r}"
        assert not raw.endswith(b"\r\n")
        return raw[:-1].decode("utf-8")

    def cmd(self, text):
        self.send(text + "\n")
        return self.line()

    def closed(self):
        try:
            return self.rfile.read(1) == b""
        except (ConnectionResetError, socket.timeout):
            return False

    def close(self):
        self.rfile.close()
        self.sock.close()


@pytest.fixture
def srv(tmp_path):
    s = Server(tmp_path / "journal").start()
    yield s
    s.stop()


def wait_len(client, queue, n):
    deadline = time.time() + 10
    while time.time() < deadline:
        if client.cmd(f"LEN {queue}") == f"+LEN {n}":
            return True
        time.sleep(0.05)
    return False


def test_executable_exists():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_ping_and_quit(srv):
    c = srv.client()
    assert c.cmd("PING") == "+PONG"
    assert c.cmd("QUIT") == "+BYE"
    assert c.closed()


def test_push_pop_fifo_by_id(srv):
    c = srv.client()
    assert c.cmd("PUSH jobs first") == "+OK 1"
    assert c.cmd("PUSH other x") == "+OK 2"
    assert c.cmd("PUSH jobs second") == "+OK 3"
    assert c.cmd("POP jobs") == "+MSG 1 first"
    assert c.cmd("POP jobs") == "+MSG 3 second"
    assert c.cmd("POP jobs") == "+EMPTY"
    assert c.cmd("POP never-used") == "+EMPTY"


def test_payload_spaces_and_unicode(srv):
    c = srv.client()
    payload = "  two leading, ünïcödé ✓ and trailing  "
    assert c.cmd(f"PUSH q {payload}") == "+OK 1"
    assert c.cmd("POP q") == f"+MSG 1 {payload}"


def test_len_and_queues(srv):
    c = srv.client()
    assert c.cmd("QUEUES") == "+QUEUES"
    for q in ["zeta", "alpha", "Mid.q", "alpha"]:
        c.cmd(f"PUSH {q} m")
    assert c.cmd("LEN alpha") == "+LEN 2"
    assert c.cmd("LEN nothing") == "+LEN 0"
    assert c.cmd("QUEUES") == "+QUEUES Mid.q alpha zeta"
    c.cmd("POP zeta")
    assert c.cmd("QUEUES") == "+QUEUES Mid.q alpha"
    assert c.cmd("LEN zeta") == "+LEN 0"


def test_ack_and_nack(srv):
    c = srv.client()
    c.cmd("PUSH q a")
    c.cmd("PUSH q b")
    assert c.cmd("POP q") == "+MSG 1 a"
    assert c.cmd("LEN q") == "+LEN 1"
    assert c.cmd("NACK 1") == "+OK"
    assert c.cmd("LEN q") == "+LEN 2"
    assert c.cmd("POP q") == "+MSG 1 a"
    assert c.cmd("ACK 1") == "+OK"
    assert c.cmd("ACK 1").startswith("-ERR ")
    assert c.cmd("POP q") == "+MSG 2 b"
    assert c.cmd("ACK 2") == "+OK"
    assert c.cmd("POP q") == "+EMPTY"


def test_lease_is_per_connection(srv):
    a, b = srv.client(), srv.client()
    a.cmd("PUSH q only")
    assert a.cmd("POP q") == "+MSG 1 only"
    assert b.cmd("POP q") == "+EMPTY"
    assert b.cmd("ACK 1").startswith("-ERR ")
    assert b.cmd("NACK 1").startswith("-ERR ")
    assert a.cmd("ACK 99").startswith("-ERR ")
    assert a.cmd("ACK 1") == "+OK"


def test_disconnect_returns_leases(srv):
    a = srv.client()
    for p in ["x", "y", "z"]:
        a.cmd(f"PUSH q {p}")
    assert a.cmd("POP q") == "+MSG 1 x"
    assert a.cmd("POP q") == "+MSG 2 y"
    assert a.cmd("ACK 2") == "+OK"
    a.close()
    b = srv.client()
    assert wait_len(b, "q", 2)
    assert b.cmd("POP q") == "+MSG 1 x"
    assert b.cmd("POP q") == "+MSG 3 z"


@pytest.mark.parametrize("bad", ["HELLO", "push q x", "PUSH q", "PUSH q ", "PUSH bad/name x", "POP",
                                 "POP a b", "LEN", "ACK", "ACK abc", "NACK -1", "PUSH " + "q" * 65 + " x",
                                 ""], ids=["unknown", "lowercase", "no-payload", "empty-payload",
                                           "bad-name", "pop-no-queue", "pop-extra", "len-no-queue",
                                           "ack-no-id", "ack-text", "nack-negative", "long-name", "empty"])
def test_malformed_requests(srv, bad):
    c = srv.client()
    assert c.cmd(bad).startswith("-ERR ")
    assert c.cmd("PING") == "+PONG"


def test_crlf_requests(srv):
    c = srv.client()
    c.send("PUSH q hello\r\nPOP q\r\nPING\r\n")
    assert [c.line(), c.line(), c.line()] == ["+OK 1", "+MSG 1 hello", "+PONG"]


def test_pipelining_and_split_packets(srv):
    c = srv.client()
    c.send("".join(f"PUSH pipe m{i}\n" for i in range(50)) + "LEN pipe\n")
    assert [c.line() for _ in range(50)] == [f"+OK {i}" for i in range(1, 51)]
    assert c.line() == "+LEN 50"
    for piece in ["PO", "P p", "ipe", "\n"]:
        c.send(piece)
        time.sleep(0.05)
    assert c.line() == "+MSG 1 m0"


def test_line_too_long_closes(srv):
    c = srv.client()
    c.send("PUSH q " + "x" * 70000 + "\n")
    try:
        reply = c.rfile.readline()
        rest = c.rfile.read(1)
    except ConnectionResetError:
        reply, rest = b"-ERR line too long\n", b""   # closed with unread input: the reply may be lost
    assert reply == b"-ERR line too long\n"
    assert rest == b""
    d = srv.client()
    assert d.cmd("LEN q") == "+LEN 0"
    assert d.cmd("PING") == "+PONG"


def test_long_line_within_limit(srv):
    c = srv.client()
    payload = "y" * 60000
    assert c.cmd(f"PUSH q {payload}") == "+OK 1"
    assert c.cmd("POP q") == f"+MSG 1 {payload}"


def test_restart_restores_state(tmp_path):
    s = Server(tmp_path / "j").start()
    try:
        c = s.client()
        for i in range(1, 6):
            assert c.cmd(f"PUSH work job {i}") == f"+OK {i}"
        c.cmd("PUSH misc keep me")
        assert c.cmd("POP work") == "+MSG 1 job 1"
        assert c.cmd("ACK 1") == "+OK"
        assert c.cmd("POP work") == "+MSG 2 job 2"
    finally:
        s.stop()
    s2 = Server(tmp_path / "j").start()
    try:
        c = s2.client()
        assert c.cmd("LEN work") == "+LEN 4"
        assert c.cmd("QUEUES") == "+QUEUES misc work"
        assert c.cmd("POP work") == "+MSG 2 job 2"
        assert c.cmd("PUSH work new") == "+OK 7"
        assert c.cmd("POP misc") == "+MSG 6 keep me"
    finally:
        s2.stop()


def test_ids_never_reused_after_all_acked(tmp_path):
    s = Server(tmp_path / "j2").start()
    try:
        c = s.client()
        c.cmd("PUSH q a")
        c.cmd("POP q")
        c.cmd("ACK 1")
    finally:
        s.stop()
    s2 = Server(tmp_path / "j2").start()
    try:
        c = s2.client()
        assert c.cmd("LEN q") == "+LEN 0"
        assert c.cmd("PUSH q b") == "+OK 2"
    finally:
        s2.stop()


def test_concurrent_consumers_get_each_message_once(srv):
    producer = srv.client()
    producer.send("".join(f"PUSH work {i}\n" for i in range(300)))
    for _ in range(300):
        assert producer.line().startswith("+OK ")
    seen, lock = [], threading.Lock()
    clients = [srv.client() for _ in range(8)]

    def consume(c):
        while True:
            reply = c.cmd("POP work")
            if reply == "+EMPTY":
                return
            _, mid, payload = reply.split(" ", 2)
            assert c.cmd(f"ACK {mid}") == "+OK"
            with lock:
                seen.append(int(payload))

    threads = [threading.Thread(target=consume, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(seen) == list(range(300))
    assert producer.cmd("LEN work") == "+LEN 0"
