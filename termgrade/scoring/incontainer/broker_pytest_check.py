"""Who gets a key: a pytest session of ``test.sh``'s own, judged on the command line each
Python registered at its start (:class:`Started`) and on every parent up to ``test.sh``
(:func:`why_refused`).

Part of TermGrade's key broker (:mod:`termgrade_broker`), staged into it as one file
(``attestation._source``); its ``__file__`` is the broker's there and lies in the same
directory in the package. Kept free of TermGrade imports and of syntax newer than Python
3.8.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
from typing import Any

from broker_proc import (  # type: ignore[import-not-found]  # staged inline
    _under,
    argv_of,
    cwd_of,
    foreign_mappings,
    proc_stat,
    start_time,
)

SHELLS = ("bash", "sh", "dash")
MAKES = ("make", "gmake")
PYTEST_SCRIPTS = ("pytest", "py.test", "pytest-3", "py.test-3")
"""Names of pytest's entry scripts (Debian's python3-pytest adds ``pytest-3``)."""
VALUED_FLAGS = "cmWX"
"""CPython's short options that take a value (``-c`` and ``-m`` end the options)."""
MAX_STARTED = 1 << 20
"""At most this many processes' start records (:class:`Started`)."""


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
        """Note what ``pid`` started as (its command line and working directory now, at
        its registration), keeping the mark of a different start under the same process."""
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
        """Record every process that connects to ``listener`` (the registration
        socket), then answer it so it goes on; runs for the broker's life."""
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
        """Serve ``listener`` in a daemon thread."""
        threading.Thread(target=self.serve, args=(listener, config), daemon=True).start()


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
    cwd: str = os.path.realpath(cwd_of(pid))
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
