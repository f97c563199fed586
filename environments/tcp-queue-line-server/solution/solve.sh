#!/usr/bin/env bash
set -euo pipefail
cat > /app/queued <<'PY'
#!/usr/bin/env python3
"""queued: a persistent, line-based message queue on 127.0.0.1."""

import argparse
import heapq
import json
import os
import re
import socket
import threading

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_LINE = 65536


class Broker:
    def __init__(self, journal):
        self.lock = threading.Lock()
        self.queues = {}      # name -> heap of ids (ready)
        self.messages = {}    # id -> (queue, payload)
        self.next_id = 1
        if os.path.exists(journal):
            self._replay(journal)
        self.journal = open(journal, "a", encoding="utf-8")

    def _replay(self, path):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    break      # torn final record: never acknowledged
                rec = json.loads(line)
                if rec[0] == "P":
                    _, mid, queue, payload = rec
                    self.messages[mid] = (queue, payload)
                    self.next_id = max(self.next_id, mid + 1)
                elif rec[0] == "A":
                    self.messages.pop(rec[1], None)
        for mid, (queue, _) in self.messages.items():
            heapq.heappush(self.queues.setdefault(queue, []), mid)

    def _log(self, rec):
        self.journal.write(json.dumps(rec, ensure_ascii=False) + "\n")
        self.journal.flush()
        os.fsync(self.journal.fileno())

    def push(self, queue, payload):
        with self.lock:
            mid = self.next_id
            self.next_id += 1
            self._log(["P", mid, queue, payload])
            self.messages[mid] = (queue, payload)
            heapq.heappush(self.queues.setdefault(queue, []), mid)
            return mid

    def pop(self, queue, leases):
        with self.lock:
            heap = self.queues.get(queue)
            if not heap:
                return None
            mid = heapq.heappop(heap)
            leases.add(mid)
            return mid, self.messages[mid][1]

    def ack(self, mid, leases):
        with self.lock:
            if mid not in leases:
                return False
            self._log(["A", mid])
            leases.discard(mid)
            del self.messages[mid]
            return True

    def release(self, mids, leases):
        with self.lock:
            for mid in list(mids):
                if mid in leases:
                    leases.discard(mid)
                    heapq.heappush(self.queues.setdefault(self.messages[mid][0], []), mid)

    def length(self, queue):
        with self.lock:
            return len(self.queues.get(queue, []))

    def names(self):
        with self.lock:
            return sorted(q for q, heap in self.queues.items() if heap)


def handle(broker, conn):
    leases = set()
    buf = b""
    try:
        with conn:
            while True:
                while b"\n" not in buf:
                    if len(buf) > MAX_LINE:
                        conn.sendall(b"-ERR line too long\n")
                        return
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                raw, buf = buf.split(b"\n", 1)
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                if len(raw) > MAX_LINE:
                    conn.sendall(b"-ERR line too long\n")
                    return
                reply, close = respond(broker, raw, leases)
                conn.sendall(reply.encode("utf-8") + b"\n")
                if close:
                    return
    except OSError:
        pass
    finally:
        broker.release(set(leases), leases)


def respond(broker, raw, leases):
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "-ERR invalid utf-8", False
    cmd, _, rest = line.partition(" ")
    if cmd == "PING" and not rest and " " not in line:
        return "+PONG", False
    if cmd == "QUIT" and line == "QUIT":
        return "+BYE", True
    if cmd == "QUEUES" and line == "QUEUES":
        return " ".join(["+QUEUES"] + broker.names()), False
    if cmd == "PUSH":
        queue, sep, payload = rest.partition(" ")
        if not NAME.match(queue) or not sep or not payload:
            return "-ERR usage: PUSH QUEUE PAYLOAD", False
        return f"+OK {broker.push(queue, payload)}", False
    if cmd in ("POP", "LEN"):
        if not NAME.match(rest):
            return f"-ERR usage: {cmd} QUEUE", False
        if cmd == "LEN":
            return f"+LEN {broker.length(rest)}", False
        got = broker.pop(rest, leases)
        return ("+EMPTY" if got is None else f"+MSG {got[0]} {got[1]}"), False
    if cmd in ("ACK", "NACK"):
        if not re.fullmatch(r"[0-9]{1,18}", rest):
            return f"-ERR usage: {cmd} ID", False
        mid = int(rest)
        if cmd == "ACK":
            return ("+OK" if broker.ack(mid, leases) else "-ERR unknown id"), False
        if mid not in leases:
            return "-ERR unknown id", False
        broker.release({mid}, leases)
        return "+OK", False
    return "-ERR unknown command", False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--journal", required=True)
    args = ap.parse_args()
    broker = Broker(args.journal)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", args.port))
    srv.listen(128)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=handle, args=(broker, conn), daemon=True).start()


if __name__ == "__main__":
    main()
PY
chmod +x /app/queued
