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

import contextlib
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
from signed_line import Signer, derive  # type: ignore[import-not-found]  # staged inline
from termgrade_watch import Writable  # type: ignore[import-not-found]  # beside this file

SHELLS = ("bash", "sh", "dash")
MAKES = ("make", "gmake")
PYTEST_SCRIPTS = ("pytest", "py.test", "pytest-3", "py.test-3")
"""Names of pytest's entry scripts (Debian's python3-pytest adds ``pytest-3``)."""
VALUED_FLAGS = "cmWX"
REGISTER_SUFFIX = ".started"
"""The registration socket's name is the key socket's plus this (the sitecustomize's)."""
MAX_STARTED = 1 << 20
"""CPython's short options that take a value (``-c`` and ``-m`` end the options)."""
MAX_CONFIG = 64 << 20
MAX_FIELD = 1000


def no_dump() -> bool:
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


def _under(path: str, roots: "list[str] | frozenset[str]") -> bool:
    """Is ``path`` one of ``roots`` or below one? (Walks up ``path``'s parents: cheap for
    the many carried files the grader names.)"""
    wanted = roots if isinstance(roots, frozenset) else frozenset(r.rstrip("/") or "/"
                                                                  for r in roots)
    here = path
    while True:
        if here in wanted:
            return True
        if here in ("/", ""):
            return False
        here = here.rpartition("/")[0] or "/"


def foreign_mappings(pid: str, config: dict[str, Any]) -> list[str] | None:
    """Files mapped by ``pid`` that the agent may have written: deleted or memfd files,
    and files under the transfer roots that are not the closure's. None: unreadable."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    return foreign_in_maps(raw.decode("utf-8", "replace"), config)


def foreign_in_maps(text: str, config: dict[str, Any]) -> list[str]:
    trusted = frozenset(r.rstrip("/") or "/" for r in config.get("trusted") or [])
    roots = frozenset(r.rstrip("/") or "/" for r in config.get("transfer_roots") or [])
    found: list[str] = []
    for line in text.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        path = fields[5]
        if path.startswith("[") or path.startswith("anon_inode:"):
            continue
        if path.endswith(" (deleted)") or path.startswith("/memfd:") or not path.startswith("/"):
            bad = True
        else:
            bad = _under(path, roots) and not _under(path, trusted)
        if bad and path not in found:
            found.append(path)
    return found

def proc_stat(pid: int) -> tuple[int, str] | None:
    """(ppid, exe) of ``pid``, or None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        ppid = int(raw[raw.rindex(b")") + 2:].split()[1])
        exe = os.readlink(f"/proc/{pid}/exe")
    except (OSError, ValueError, IndexError):
        return None
    return ppid, exe


def argv_of(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return []


class Started:
    """What each Python of the container ran when it started, as the kernel showed it
    then: the grader's sitecustomize connects to the registration socket before any
    code but the closure's and the grader's has run in that process, and waits until the
    broker has read its command line and working directory. A process can rewrite its
    own command line in memory later (as ``setproctitle`` does), never this record. A
    process that ever started anything but the task's pytest (an exec keeps the pid)
    stays marked."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[int, list[str], str, bool]] = {}

    def record(self, pid: int, config: dict[str, Any]) -> None:
        begun = start_time(pid)
        if begun is None or len(self.seen) >= MAX_STARTED:
            return
        argv, cwd = argv_of(pid), cwd_of(pid)
        earlier = self.seen.get(pid)
        other = not_pytest(argv, cwd, config) is not None
        if earlier is not None and earlier[0] == begun:
            other = other or earlier[3]
        self.seen[pid] = (begun, argv, cwd, other)

    def of(self, pid: int) -> tuple[list[str], str, bool] | None:
        """(command line, working directory, ran anything but pytest) at its start, or
        None when this very process never registered."""
        entry = self.seen.get(pid)
        if entry is None or entry[0] != start_time(pid):
            return None
        return entry[1], entry[2], entry[3]

    def serve(self, listener: socket.socket, config: dict[str, Any]) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                        struct.calcsize("3i"))
                self.record(struct.unpack("3i", creds)[0], config)
                with contextlib.suppress(OSError):
                    conn.sendall(b"1")

    def start(self, listener: socket.socket, config: dict[str, Any]) -> None:
        threading.Thread(target=self.serve, args=(listener, config), daemon=True).start()


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot): with the pid, names one process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return int(raw[raw.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def shell_runs_tests(pid: int, argv: list[str]) -> bool:
    """A shell running ``-c`` text or a script under /tests (test.sh, a subshell of it)."""
    for arg in argv[1:]:
        if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg):
            return True
        if arg.startswith("-") or arg.startswith("+"):
            continue
        path = arg if arg.startswith("/") else os.path.join(cwd_of(pid), arg)
        return os.path.realpath(path).startswith("/tests/")
    return False


def cwd_of(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return "/"


def python_target(argv: list[str]) -> tuple[str, str]:
    """What a Python command line runs, parsed as CPython parses its options: ("module",
    name) for ``-m``, ("code", text) for ``-c``, ("script", path), or ("stdin", "-") for
    ``-``, no script or an unknown shape (the interactive interpreter reads stdin)."""
    at = 1
    while at < len(argv):
        arg = argv[at]
        if arg == "--":
            return ("script", argv[at + 1]) if at + 1 < len(argv) else ("stdin", "-")
        if arg.startswith("--"):  # --check-hash-based-pycs MODE, --help, --version
            at += 2 if arg == "--check-hash-based-pycs" else 1
            continue
        if not arg.startswith("-") or arg == "-":
            return ("script", arg) if arg != "-" else ("stdin", "-")
        for offset, flag in enumerate(arg[1:], 2):
            if flag in VALUED_FLAGS:
                rest = arg[offset:]
                value = rest or (argv[at + 1] if at + 1 < len(argv) else "")
                if flag == "c":
                    return ("code", value)
                if flag == "m":
                    return ("module", value)
                at += 0 if rest else 1  # -W/-X take their value from the next word
                break
        at += 1
    return ("stdin", "-")


def closure_roots(config: dict[str, Any]) -> frozenset[str]:
    """The verifier's closure: what the broker trusts, less /tests and the grader's dir."""
    others = {str(config.get("tests_dir", "/tests")).rstrip("/"),
              os.path.dirname(os.path.abspath(__file__))}
    return frozenset(r.rstrip("/") or "/" for r in config.get("trusted") or []
                     if (r.rstrip("/") or "/") not in others)


def not_pytest(argv: list[str], cwd: str, config: dict[str, Any]) -> str | None:
    """None when a Python started as ``argv`` in ``cwd`` runs a pytest session of the
    task's own: ``-m pytest`` (the sitecustomize makes that the closure's module), the
    closure's ``pytest`` entry script (as its shebang runs it: ``bash``, ``uv run`` and
    ``uvx`` all do), or a runner script of the tests (in ``/tests``, which no agent code
    can write before the first key: it may call ``pytest.main``). Any other script, ``-c``
    text or stdin: why not."""
    kind, what = python_target(argv)
    if kind == "module":
        return None if what == "pytest" else f"runs the module {what[:200]}, not pytest"
    if kind != "script":
        return f"runs {kind} text, not pytest"
    given = os.path.normpath(what if what.startswith("/") else os.path.join(cwd, what))
    real = os.path.realpath(given)
    if os.path.basename(given) in PYTEST_SCRIPTS and os.path.basename(real) in PYTEST_SCRIPTS:
        closure = closure_roots(config)
        if _under(given, closure) and _under(real, closure):
            return None
    tests = [str(config.get("tests_dir", "/tests")).rstrip("/")]
    if _under(given, tests) and _under(real, tests):
        return None
    return f"runs {given[:300]}, not the closure's pytest"


def not_started_as_pytest(pid: int, config: dict[str, Any], started: Started) -> str | None:
    """None when ``pid`` started as the task's pytest (:func:`not_pytest`, on what it
    registered at its start), never started as anything else under this pid, and still
    shows the same command line; else why not."""
    began = started.of(pid)
    if began is None:
        return "it never told the broker what it started as (the grader's sitecustomize " \
            "did not run in it)"
    argv, cwd, other = began
    why = not_pytest(argv, cwd, config)
    if why is not None:
        return why
    if other:
        return "this process ran something other than pytest before (an exec keeps its pid)"
    if argv_of(pid) != argv:
        return "its command line changed since it started: " + " ".join(argv_of(pid))[:300]
    return None


def why_refused(pid: int, root: int, config: dict[str, Any], started: Started) -> str | None:
    """None when ``pid`` is a pytest session of test.sh's own: the closure's Python running
    the closure's pytest (or a runner in /tests), whose every parent up to test.sh runs the
    image's launchers, a script of the tests or ``-c`` text of a shell, and maps no file
    the agent wrote; else why not."""
    here = proc_stat(pid)
    if here is None:
        return "unreadable"
    if here[1] not in config["pythons"]:
        return f"not the image's Python: {here[1]}"
    why = not_started_as_pytest(pid, config, started)
    if why is not None:
        return why
    roots = frozenset(r.rstrip("/") or "/" for r in config.get("transfer_roots") or [])
    trusted = frozenset(r.rstrip("/") or "/" for r in config.get("trusted") or [])
    parent = here[0]
    hops = 0
    while parent != root:
        hops += 1
        if parent <= 1 or hops > 64:
            return "not started by test.sh"
        step = proc_stat(parent)
        if step is None:
            return "a parent vanished"
        name = os.path.basename(step[1])
        mapped = foreign_mappings(str(parent), config)
        if mapped is None or mapped:
            return f"started by {step[1]}, which maps a file the agent wrote: " + \
                ", ".join((mapped or ["(unreadable)"])[:3])
        if step[1] in config["pythons"]:
            known = started.of(parent)
            if not python_runs_tests(*((known[0], known[1]) if known else
                                       (argv_of(parent), cwd_of(parent)))) or (
                    known is not None and argv_of(parent) != known[0]):
                return "started by a Python running agent code"
        elif step[1] not in config["tools"] or (
                _under(step[1], roots) and not _under(step[1], trusted)):
            return f"started by {step[1]}"
        elif name in SHELLS and not shell_runs_tests(parent, argv_of(parent)):
            return "started by a shell running agent code"
        elif name in MAKES and not make_runs_tests(parent, argv_of(parent)):
            return "started by make running a Makefile outside /tests"
        parent = step[0]
    return None


def make_runs_tests(pid: int, argv: list[str]) -> bool:
    """make reading a Makefile of the tests: ``-f`` one under /tests, or (``-C``, which
    make has already entered) its working directory is under /tests."""
    for at, arg in enumerate(argv):
        named = argv[at + 1] if arg in ("-f", "--file", "--makefile") and at + 1 < len(argv) \
            else arg[2:] if arg.startswith("-f") and len(arg) > 2 else None
        if named is not None:
            path = named if named.startswith("/") else os.path.join(cwd_of(pid), named)
            return os.path.realpath(path).startswith("/tests/")
    cwd = os.path.realpath(cwd_of(pid))
    return cwd == "/tests" or cwd.startswith("/tests/")


def python_runs_tests(argv: list[str], cwd: str) -> bool:
    """The image's Python running a script of the tests (a runner in /tests)."""
    for arg in argv[1:]:
        if arg in ("-c", "-m") or (arg.startswith("-") and arg[-1:] in ("c", "m")
                                   and not arg.startswith("--")):
            return False
        if arg.startswith("-"):
            continue
        path = arg if arg.startswith("/") else os.path.join(cwd, arg)
        return os.path.realpath(path).startswith("/tests/")
    return False


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def ids_of(pid: int) -> tuple[list[int], list[int], int] | None:
    """(uids, gids, TracerPid) of ``pid`` from ``/proc/PID/status`` (readable by anyone),
    or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    try:
        uids = [int(v) for v in fields["Uid"].split()]
        gids = [int(v) for v in fields["Gid"].split()]
        return uids, gids, int(fields["TracerPid"].strip())
    except (KeyError, ValueError):
        return None


def as_owner(pid: int, look: Any) -> Any:
    """``look()`` with this thread's filesystem uid and gid set to ``pid``'s, so the kernel's
    access check on ``/proc/PID`` (PTRACE_MODE_READ_FSCREDS) compares like with like: it
    then passes exactly when ``pid`` is dumpable. Raises PermissionError when ``pid``'s
    uids (or gids) differ among themselves: no filesystem identity matches it."""
    ids = ids_of(pid)
    if ids is None:
        raise ProcessLookupError(pid)
    uids, gids, _ = ids
    if len(set(uids[:3])) != 1 or len(set(gids[:3])) != 1:
        raise PermissionError(f"pid {pid} has mixed uids {uids} or gids {gids}")
    if uids[0] == os.geteuid() and gids[0] == os.getegid():
        return look()
    libc = _libc()
    libc.setfsgid(gids[0])
    libc.setfsuid(uids[0])
    try:
        return look()
    finally:
        libc.setfsuid(os.geteuid())
        libc.setfsgid(os.getegid())


def dumpable(pid: int) -> bool:
    """Can a process of ``pid``'s own user open its memory (``/proc/PID/environ`` takes
    the same check as ``mem``, for reading)? False once it made itself non-dumpable."""
    def look() -> bool:
        try:
            os.close(os.open(f"/proc/{pid}/environ", os.O_RDONLY | os.O_CLOEXEC))
            return True
        except PermissionError:
            return False
    try:
        return bool(as_owner(pid, look))
    except PermissionError:
        return False


IO_URING = "anon_inode:[io_uring]"


def io_uring_files(fdinfo: str) -> list[str]:
    """The files registered with an io_uring instance (its ``UserFiles`` in fdinfo: a
    handle no file table shows); one that cannot be read counts as a handle on
    anything (``/proc/?``)."""
    try:
        with open(fdinfo, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return ["/proc/?/io_uring"]
    files: list[str] = []
    inside, count = False, 0
    for line in text.splitlines():
        if line.startswith("UserFiles:"):
            inside = True
            with contextlib.suppress(ValueError):
                count = int(line.split(":", 1)[1])
        elif inside and line[:1].isspace() and ":" in line:
            files.append(line.split(":", 1)[1].strip())
        elif inside:
            inside = False
    return files if len(files) >= count else ["/proc/?/io_uring"]


def open_files(pid: int) -> list[str] | None:
    """What the file descriptors of ``pid`` and of each of its threads name (a thread
    cloned without ``CLONE_FILES`` has a table of its own, which ``/proc/PID/fd`` does
    not show); None when the kernel hides one from the broker (non-dumpable, or a thread
    of other credentials). Raises ProcessLookupError when ``pid`` is gone."""
    def look() -> list[str]:
        links = []
        for table in [f"/proc/{pid}/fd", *(f"/proc/{pid}/task/{t}/fd"
                                           for t in os.listdir(f"/proc/{pid}/task"))]:
            try:
                names = os.listdir(table)
            except FileNotFoundError:
                continue  # a thread that just ended
            for name in names:
                with contextlib.suppress(FileNotFoundError):
                    link = os.readlink(f"{table}/{name}")
                    links.append(link)
                    if link == IO_URING:  # its registered files are in no table: named here
                        links += io_uring_files(f"{table[:-2]}fdinfo/{name}")
        return links
    try:
        return list(as_owner(pid, look))
    except PermissionError:
        return None
    except FileNotFoundError as exc:
        raise ProcessLookupError(pid) from exc


def zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return raw[raw.rindex(b")") + 2:][:1] in (b"Z", b"X")
    except (OSError, ValueError):
        return True  # gone


def comm_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", "rb") as handle:
            return handle.read().decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def key_exposed(pid: int, keep: "set[int]") -> str | None:
    """None when no other process can read ``pid``'s memory once it holds a key; else why
    it could. ``pid`` must already be non-dumpable (then no process of the container,
    which has no CAP_SYS_PTRACE, can open its ``/proc/PID/mem``, ``ptrace`` it or
    ``process_vm_readv`` it) and untraced, and no process but those in ``keep`` (the
    broker, the sessions already keyed) may hold a file of ``/proc/PID`` or of one of its
    threads open: such a handle, opened while ``pid`` was still dumpable, reads its memory
    later. A process whose open files the kernel hides from the broker (non-dumpable, or
    of mixed uids) could hold one, so it too refuses the key."""
    ids = ids_of(pid)
    if ids is None:
        return "it vanished"
    if ids[2] != 0:
        return f"it is traced by pid {ids[2]}"
    if dumpable(pid):
        return "it is still dumpable (the plugin makes it non-dumpable before it asks): " \
            "another process could open its memory"
    try:
        mine = {pid, *(int(t) for t in os.listdir(f"/proc/{pid}/task") if t.isdigit())}
    except OSError:
        return "its threads are unreadable"
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in keep or int(name) in mine:
            continue
        other = int(name)
        if zombie(other):
            continue  # a zombie holds no files
        try:
            links = open_files(other)
        except ProcessLookupError:
            continue
        if links is None:
            return f"process {other} ({comm_of(other)}) hides its open files from the " \
                "broker (it is non-dumpable or has mixed uids): it may hold a handle on " \
                "the pytest process's memory"
        for link in links:
            if link == "/proc/?/io_uring":
                return f"process {other} ({comm_of(other)}) holds an io_uring instance " \
                    "whose registered files the broker cannot read: it may hold a handle " \
                    "on the pytest process's memory"
            parts = link.split("/")
            if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and (
                    int(parts[2]) in mine or (len(parts) > 4 and parts[3] == "task"
                                              and parts[4].isdigit()
                                              and int(parts[4]) in mine)):
                return f"process {other} ({comm_of(other)}) holds {link} open: it could " \
                    "read the pytest process's memory"
    return None


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

    def read(self, fds: "list[int]") -> None:
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
    sessions = 0
    keyed = Keyed(signer)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    woken, wake = os.pipe()
    threading.Thread(target=_signals_to, args=(wake,), daemon=True).start()
    while True:
        ready, _, _ = select.select([listener.fileno(), woken, *keyed.fds()], [], [], 0.05)
        writable.drain()
        keyed.read([fd for fd in ready if fd not in (listener.fileno(), woken)])
        if woken in ready:
            data = os.read(woken, 4096)
            senders = [pid for (pid,) in struct.iter_unpack("i", data[:len(data) // 4 * 4])]
            if root in senders:
                keyed.drain()
                writable.check()
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
                        config.get("install_dirs"), config.get("pythons"))
    mapped = foreign_mappings("self", config)
    if mapped:
        signer.emit({"e": "alarm", "how": "mapping", "pid": os.getpid(),
                     "path": ", ".join(mapped[:5])[:MAX_FIELD]})
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
    serve(master, config, root, listener, signer, services, writable, started)


if __name__ == "__main__":
    main()
