"""TermGrade's key broker in the scoring container; copied in at scoring time.

The grader starts it (the closure's Python by absolute path, ``-s -S`` with ``PYTHONHOME``
set to the interpreter's own prefix, so no ``pyvenv.cfg`` or stdlib landmark of the
agent's decides its standard library) before ``test.sh``,
while no agent process exists in the container. It:

1. reads its configuration and the run's one-time master key from its standard input
   (a pipe from the host: the key never touches the container's filesystem), makes
   itself non-dumpable, binds the trial's random socket name (nothing of the agent's has
   run in the container yet, so nothing can hold that name), and checks its own
   mappings;
2. starts the task's declared services and waits until each is ready;
3. forks into the background, prints its pid and returns, so ``test.sh`` starts;
4. hands each pytest session of ``test.sh`` its own key, over an abstract unix socket.
   The kernel names the asking process (``SO_PEERCRED``); a key goes only to a Python
   of the image's closure that runs pytest (``-m pytest``, the closure's ``pytest``
   script, or a runner script in ``/tests``: never another script, ``-c`` text or stdin,
   whatever its parents; judged on the command line and working directory the process
   had at its start, which the grader's sitecustomize reports on a second socket before
   any code of the agent's can run in it: :class:`Started`) and whose parents up to
   ``test.sh`` are ``test.sh`` itself, its subshells, other scripts in ``/tests`` (shell
   or Python), or launchers of the image (``timeout``, ``env``, ``make``, ``uv``...),
   none of them mapping a file the agent wrote. A session started by agent code (a test
   that runs pytest, an agent program, a service, a generator ``test.sh`` runs from
   ``/app``) gets none and stays silent. Nor does
   a process that maps a file the agent wrote (a deleted file, a memfd, a file under the
   task's transfer roots that is not the verifier's closure): that one raises an alarm;
5. on ``SIGUSR1`` from the grader's shell (the sender is checked), writes the end
   marker, which is derived from the key, so no command line or file ever shows it.

Every line it writes is signed with a key derived from the master key and numbered.
Kept free of TermGrade imports and of syntax newer than Python 3.8.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the grader's read-only dir
from broker_memory import key_exposed  # type: ignore[import-not-found]  # staged inline
from broker_proc import argv_of, foreign_mappings  # type: ignore[import-not-found]  # staged inline
from broker_pytest_check import Started, why_refused  # type: ignore[import-not-found]  # staged inline
from signed_line import Signer, derive  # type: ignore[import-not-found]  # staged inline
from termgrade_watch import Writable  # type: ignore[import-not-found]  # beside this file

REGISTER_SUFFIX = ".started"
"""The registration socket's name is the key socket's plus this (the sitecustomize's)."""
MAX_CONFIG = 64 << 20
MAX_FIELD = 1000


def no_dump() -> bool:
    """Make the broker non-dumpable (``PR_SET_DUMPABLE`` 0); False when that failed."""
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)) == 0
    except Exception:
        return False


def take_config() -> dict[str, Any]:
    """One JSON line from standard input (the host's pipe), which is then closed."""
    data = b""
    while not data.endswith(b"\n") and len(data) < MAX_CONFIG:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        data += chunk
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    config: dict[str, Any] = json.loads(data.decode("utf-8"))
    return config


def prepare_tests(config: dict[str, Any]) -> None:
    """The private writable copy of the tests, from the grader's read-only staging."""
    import shutil

    source = config.get("tests_source")
    target = config.get("tests_dir", "/tests")
    if source and os.path.isdir(source):
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    for extra in config.get("install_dirs") or []:
        os.makedirs(extra, exist_ok=True)


def start_services(config: dict[str, Any], signer: Signer) -> list[int]:
    """Start the task's declared services, each in its own session with its log in
    ``/logs/verifier``, and wait until each is ready; signed ``service`` events. Their pids."""
    pids: list[int] = []
    for number, service in enumerate(config.get("services", [])):
        log = open(f"/logs/verifier/service-{number}.log", "ab")  # noqa: SIM115
        process = subprocess.Popen(
            ["/bin/bash", "-c", str(service["command"])], cwd=str(service.get("workdir", "/")),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        pids.append(process.pid)
        ready = service.get("ready")
        ok = True
        if ready:
            deadline = time.monotonic() + float(service.get("ready_timeout_sec", 30))
            ok = False
            while time.monotonic() < deadline:
                ok = subprocess.run(["/bin/bash", "-c", str(ready)], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    check=False).returncode == 0
                if ok:
                    break
                time.sleep(0.2)
        signer.emit({"e": "service", "n": number, "ready": ok, "pid": process.pid})
    return pids


def _signals_to(pipe: int) -> None:
    """Every SIGUSR1 (blocked in every thread), its sender's pid written to ``pipe``: the
    serving loop wakes at once, not at its next poll."""
    while True:
        info = signal.sigwaitinfo([signal.SIGUSR1])
        os.write(pipe, struct.pack("i", info.si_pid))


def nodump_step(conn: socket.socket, pid: int) -> str | None:
    """The asker passed every check that reads its ``/proc`` (which needs it dumpable): it
    now makes itself non-dumpable and says so; then :func:`key_exposed` looks for a handle
    on its memory that anything opened before. None: it did; else why not."""
    try:
        conn.settimeout(10)
        conn.sendall(json.dumps({"ok": False, "step": "nodump"}).encode() + b"\n")
        said = b""
        while not said.endswith(b"\n") and len(said) < 64:
            chunk = conn.recv(64)
            if not chunk:
                break
            said += chunk
    except OSError as exc:
        return f"it did not answer the broker's non-dumpable step: {exc}"
    if said != b"nodump\n":
        return "it did not make itself non-dumpable when asked"
    return None


class Keyed:
    """The connections of the keyed sessions, kept open: the plugin writes ``bye PID`` on
    it as its process's very last act. A connection that closes without it means the
    session's process ended otherwise (a signal killed it, it called ``_exit`` or ran
    ``exec``): the broker says so, signed, and the host never counts that session as one
    that exited normally, whatever lines were written for it."""

    def __init__(self, signer: Signer) -> None:
        self.signer = signer
        self.conns: dict[int, tuple[socket.socket, int, int, bytes]] = {}

    def add(self, conn: socket.socket, number: int, pid: int) -> None:
        conn.setblocking(False)
        self.conns[conn.fileno()] = (conn, number, pid, b"")

    def pids(self) -> set[int]:
        return {pid for _, _, pid, _ in self.conns.values()}

    def fds(self) -> list[int]:
        return list(self.conns)

    def read(self, fds: list[int]) -> None:
        for fd in fds:
            if fd not in self.conns:
                continue
            conn, number, pid, seen = self.conns[fd]
            try:
                data = conn.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data and len(seen) < 4096:
                self.conns[fd] = (conn, number, pid, seen + data)
                continue
            del self.conns[fd]
            conn.close()
            if f"bye {pid}\n".encode() not in seen:
                self.signer.emit({"e": "died", "n": number, "pid": pid})

    def drain(self) -> None:
        """Read what is already there (before the end is written)."""
        while self.conns:
            ready, _, _ = select.select(self.fds(), [], [], 0)
            if not ready:
                return
            self.read(ready)


def serve(master: bytes, config: dict[str, Any], root: int, listener: socket.socket,
          signer: Signer, services: list[int], writable: Writable, started: Started) -> None:
    """The broker's loop: key or refuse each asker, note each keyed session's end, and
    on the grader's SIGUSR1 write the end marker and return."""
    sessions = 0
    keyed = Keyed(signer)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    woken, wake = os.pipe()
    threading.Thread(target=_signals_to, args=(wake,), daemon=True).start()
    while True:
        ready, _, _ = select.select([listener.fileno(), woken, *keyed.fds(), *writable.fds()],
                                    [], [], 0.05)
        writable.drain()
        keyed.read([fd for fd in ready if fd in keyed.conns])
        if woken in ready:
            data = os.read(woken, 4096)
            senders = [pid for (pid,) in struct.iter_unpack("i", data[:len(data) // 4 * 4])]
            if root in senders:
                keyed.drain()
                writable.finish()
                signer.emit({"e": "end", "sessions": sessions})
                marker = "TERMGRADE-END " + derive(master, "end").hex()[:32]
                os.write(signer.fd, (marker + "\n").encode())
                return
            for pid in senders:
                signer.emit({"e": "signal", "from": pid})
        if listener.fileno() not in ready:
            continue
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid = struct.unpack("3i", creds)[0]
        why = why_refused(pid, root, config, started)
        if why is None:  # its own PATH (test.sh may set one), read while it is dumpable
            writable.shadows.follow(pid)
        mapped = foreign_mappings(str(pid), config) if why is None else []
        if mapped is None:
            why = "its mappings are unreadable"
        elif mapped:
            why = "it maps a file the agent wrote: " + ", ".join(mapped[:5])
            signer.emit({"e": "alarm", "how": "mapping", "pid": pid,
                         "path": ", ".join(mapped[:5])[:MAX_FIELD]})
        if why is None:
            why = nodump_step(conn, pid)
        if why is None:
            why = key_exposed(pid, {os.getpid(), *keyed.pids()})
        if why is None:
            writable.seal()
        if why is not None:
            signer.emit({"e": "refused", "pid": pid, "why": why[:MAX_FIELD],
                         "argv": " ".join(argv_of(pid))[:MAX_FIELD]})
            reply: dict[str, Any] = {"ok": False}
        else:
            sessions += 1
            signer.emit({"e": "session", "n": sessions, "pid": pid,
                         "argv": " ".join(argv_of(pid))[:MAX_FIELD]})
            reply = {"ok": True, "n": sessions, "broker_pid": os.getpid(),
                     "key": derive(master, f"session {sessions}").hex(),
                     "trusted": config["trusted"], "services": services,
                     "transfer_roots": config.get("transfer_roots") or []}
        try:
            conn.sendall(json.dumps(reply).encode() + b"\n")
        except OSError:
            reply["ok"] = False
        if reply["ok"]:
            keyed.add(conn, sessions, pid)
        else:
            conn.close()


def main() -> None:
    """Read the configuration, bind the sockets, start the services, then fork into the
    background (the parent prints the child's pid and exits) and serve."""
    config = take_config()
    master = bytes.fromhex(config.pop("key"))
    no_dump()
    root = os.getppid()
    signer = Signer(derive(master, "session 0"), 0)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    listener.bind("\0" + str(config["socket"]))
    listener.listen(64)
    registrar = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    registrar.bind("\0" + str(config["socket"]) + REGISTER_SUFFIX)
    registrar.listen(4096)
    started = Started()
    # services are Pythons too: they register at once. SIGUSR1 is the grader's, which
    # serve waits for: blocked in this thread (not in the services this one starts)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    started.start(registrar, config)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
    signer.emit({"e": "broker", "pid": os.getpid()})
    prepare_tests(config)
    writable = Writable([config.get("tests_dir", "/tests")], signer,
                        config.get("install_dirs"), config.get("pythons"),
                        config.get("path_dirs"), config.get("path_carried"),
                        config.get("names"), config.get("names_skip"),
                        config.get("names_files"))
    mapped = foreign_mappings("self", config)
    if mapped:
        signer.emit({"e": "alarm", "how": "mapping", "pid": os.getpid(),
                     "path": ", ".join(mapped[:5])[:MAX_FIELD]})
    if config.get("services"):  # agent code: only once the names it could make are watched
        writable.names.start(background=False)
    services = start_services(config, signer)
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child:
        os.close(ready_w)
        os.read(ready_r, 1)
        sys.stdout.write(f"{child}\n")
        sys.stdout.flush()
        os._exit(0)
    os.close(ready_r)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.setsid()
    os.write(ready_w, b"1")
    os.close(ready_w)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])  # as serve does
    started.start(registrar, config)  # threads do not survive the fork
    writable.names.start(background=True)
    serve(master, config, root, listener, signer, services, writable, started)


if __name__ == "__main__":
    main()
