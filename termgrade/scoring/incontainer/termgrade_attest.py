"""TermGrade's attestation plugin for the verifier's pytest; copied in at scoring time.

pytest loads it through ``PYTEST_PLUGINS`` under a per-trial module name nobody can
guess, with entry-point autoloading off, before any other plugin, conftest or test module
(only test.sh's own ``-p`` options come earlier). At import
it:

1. asks the grader's broker for this session's key (the broker checks, through the
   kernel, that this process is a pytest that ``test.sh`` started; a session that agent
   code started gets no key and stays silent), then makes itself non-dumpable;
2. reports code that enters this process from anywhere but the verifier's read-only
   closure and the tests: modules, files and libraries loaded from elsewhere, code
   objects run from such a file (a file the tests wrote themselves, while nothing else
   ran, is theirs), code compiled from a string and run during a test
   (outside the standard library's own code generators; ``doctest`` only of the tests'
   own files, ``timeit`` only of callables), a pickle that names a callable outside a
   small safe set, a pytest configuration file of the agent's;
3. loads the closure's own pytest plugins (``pytest11`` entry points of distributions in
   this interpreter's prefixes, never one a ``.pth`` or the working directory put on
   ``sys.path``): the grader turns autoloading off, so nothing registered through an entry
   point runs before this plugin; at exit it reports any file it maps that the agent wrote;
4. kills every process that agent code run by a test left behind, when that test ends;
5. says for every skip, xfail and deselection what caused it (a marker written in the
   tests' source, pytest's own ``-k``/``-m``/``--deselect``, or something at run time),
   and every module that skipped at import and every collected test (the host's decision
   rule, ``termgrade.scoring.verifier.attestation``, judges them).

Every event is one numbered line signed with the session's key, written to
``/proc/1/fd/1``: a pipe the host reads as it is written, which nothing inside can take
back. Kept free of TermGrade imports and of syntax newer than Python 3.8.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import struct
import sys
from typing import Any

from attest_alarms import (  # type: ignore[import-not-found]  # staged inline
    CODE_GENERATORS,
    LOADER_FRAMES,
    NOT_FILES,
    SPAWNS,
    TIMEIT_CALLS,
    WATCHED,
    WRITE_FLAGS,
    _below_any,
    _normal_lines,
    _own_prefixes,
    _pickle_safe,
    _runs_tests_helper,
)
from attest_evidence import MAX_EVENT, MAX_IDS_JSON, _evidence, _text  # type: ignore[import-not-found]  # staged inline
from attest_marks import _fixed_conditions, _marked_by_source, _stash_get  # type: ignore[import-not-found]  # staged inline
from attest_proc import (  # type: ignore[import-not-found]  # staged inline
    _chain,
    _cmdline,
    _frozen,
    _no_dump,
    _parents,
    _pids,
    _start_time,
    _stat,
    _state,
)
from signed_line import Signer  # type: ignore[import-not-found]  # staged inline

SOCKET_FILE = "broker-socket"
"""Beside this file in the grader's read-only directory: the broker's random socket name."""

for _finder in sys.meta_path:  # the grader's sitecustomize held names the closure lacks
    if getattr(_finder, "guarded", False) is True:  # to the tests' directories until now:
        setattr(_finder, "sealed", False)  # noqa: B010  # from here on, the agent-code
        setattr(_finder, "guarded", False)  # noqa: B010  # finder reports


def _socket_name() -> str:
    where = os.path.join(os.path.dirname(os.path.abspath(__file__)), SOCKET_FILE)
    with open(where, encoding="utf-8") as handle:
        return "\0" + handle.read().strip()


def _ask_broker() -> dict[str, Any] | None:
    """This session's grant, or None. The connection stays open for the process's life:
    :func:`_bye` ends it, and the broker takes its closing without that word as the
    process's death by a signal (or ``_exit``)."""
    global _CONN
    conn = None
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        conn.settimeout(10)
        conn.connect(_socket_name())
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        reader = conn.makefile("rb")
        grant = json.loads(reader.readline().decode("utf-8"))
        if isinstance(grant, dict) and grant.get("step") == "nodump":
            # the broker has read this process's /proc (which needs it dumpable): from
            # here no process of the container can open its memory; the broker then looks
            # for a handle opened before, and only then sends the key
            _no_dump()
            conn.sendall(b"nodump\n")
            grant = json.loads(reader.readline().decode("utf-8"))
        reader.close()
    except (OSError, ValueError):
        if conn is not None:
            conn.close()
        return None
    if not isinstance(grant, dict) or not grant.get("ok"):
        conn.close()
        return None
    grant["broker"] = struct.unpack("3i", creds)[0]
    _CONN = conn
    return grant


_CONN: socket.socket | None = None
"""The connection the key came on, open until :func:`_bye`."""
_OWN_PID = os.getpid()


def _bye() -> None:
    """This process's last word to the broker (registered first, so it runs last at exit):
    it ended normally. A forked child running atexit says nothing (the pid is not its)."""
    if _CONN is not None and os.getpid() == _OWN_PID:
        with contextlib.suppress(OSError):
            _CONN.sendall(f"bye {_OWN_PID}\n".encode())
            _CONN.close()


_GRANT = _ask_broker()
# done already when the broker asked (a grant needs it); a refused one stays as it was
_DUMPABLE_OFF = _no_dump() if _GRANT is not None else False
_CHANNEL: Signer | None = None
_TRUSTED: tuple[str, ...] = ()
_KEEP: set[int] = set()
"""Processes never killed: this one, its parents, the broker, the services."""
_SERVICE_PIDS: set[int] = set()
_WROTE: dict[str, tuple[int, ...]] = {}
"""Files the tests wrote -> their identity, taken while no other process could write."""
_PENDING: set[str] = set()
"""Files the tests opened for writing whose identity is not taken yet."""
_GRADER_PIDS: set[int] = set()
"""The grader's processes in B (see :func:`_grader_pids`): no others means no agent code
runs anywhere in the container but in this process, where the audit hook sees it."""
MAX_WROTE = 10000
_READ_AGENTS = [False, False]
"""Has this process opened a file of the agent's for reading [this session outside any
test, during the current test]? After that, what the tests write may carry its bytes."""
_TEST_TEXT = ""
_IN_TEST = False
if _GRANT is not None:
    try:
        _CHANNEL = Signer(bytes.fromhex(str(_GRANT["key"])), int(_GRANT["n"]))
        _TRUSTED = tuple(str(p).rstrip("/") for p in _GRANT.get("trusted", []))
        _SERVICE_PIDS = {int(p) for p in _GRANT.get("services", [])}
    except (OSError, KeyError, ValueError):
        _CHANNEL = None


def _emit(event: dict[str, Any]) -> None:
    if _CHANNEL is not None:
        _CHANNEL.emit(event)


def _trusted(path: str) -> bool:
    return any(path == root or path.startswith(root + "/") for root in _TRUSTED)


def _tests_text() -> str:
    global _TEST_TEXT
    if not _TEST_TEXT:
        parts = []
        for here, _dirs, names in os.walk("/tests"):
            for name in names:
                with contextlib.suppress(OSError, UnicodeDecodeError), \
                        open(os.path.join(here, name), encoding="utf-8") as handle:
                    parts.append(_normal_lines(handle.read(1 << 20)))
        _TEST_TEXT = "\n\x00\n".join(parts) or "\x00"
    return _TEST_TEXT


def _grader_pids() -> set[int]:
    """The grader's processes in B: this one and its parents, the container's first
    process and what it started before the broker, the broker, and what the shells above
    ``test.sh`` run beside it (``tee``, ``head``). Not: services, nor anything ``test.sh``
    or a test started (an orphan of theirs is the first process's child, born later)."""
    chain = _chain(os.getpid())
    shell = next((p for p in chain if _cmdline(p)[1:2] == [b"/tests/test.sh"]), None)
    above = set(chain[chain.index(shell) + 1:]) if shell is not None else set()
    broker = int((_GRANT or {}).get("broker_pid", 0) or 0)
    born = _start_time(broker) if broker else -1
    found = set(chain) | {1, broker}
    parents = {pid: (_stat(pid) or (-1, -1))[0] for pid in _pids()}
    for pid, parent in parents.items():
        if parent == 1 and 0 <= _start_time(pid) < born:
            found.add(pid)
            continue
        seen = 0
        while parent > 1 and parent != shell and seen < 64:
            if parent in above:
                found.add(pid)
                break
            parent, seen = parents.get(parent, -1), seen + 1
    return found


def _quiet() -> bool:
    """No process but the grader's: nothing but this one can write a file now."""
    return bool(_GRADER_PIDS) and _pids() <= _GRADER_PIDS


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _settle() -> None:
    """Take the identity of the files the tests just wrote, if only this process could
    have written them since; else forget them (they are judged by their text)."""
    if not _PENDING:
        return
    quiet = _quiet()
    for path in _PENDING:
        found = _identity(path) if quiet else None
        if found is not None and len(_WROTE) < MAX_WROTE:
            _WROTE[path] = found
        else:
            _WROTE.pop(path, None)
    _PENDING.clear()


def _opened_by_tests() -> bool:
    """The nearest frame that is neither the standard library nor another library of the
    closure belongs to a file of the tests."""
    frame: Any = sys._getframe(3)  # past this, _tests_writing and the audit hook
    for _ in range(64):
        if frame is None:
            return False
        name = frame.f_code.co_filename
        if name.startswith("/tests/"):
            return True
        if not (name.startswith("<") or _trusted(name)) or name == __file__:
            return False
        frame = frame.f_back
    return False


def _reading(target: object) -> None:
    """A file opened for reading: if it may hold the agent's bytes (not the closure's, the
    tests', the grader's, nor one the tests wrote), what the tests write next in this test
    (or, read outside a test, in this session) is no longer vouched for by its writer."""
    if not isinstance(target, (str, bytes)) or _READ_AGENTS[0] or (
            _READ_AGENTS[1] and _IN_TEST):
        return
    literal = os.path.abspath(os.fsdecode(target))
    if _trusted(literal) or literal.startswith(NOT_FILES):
        return
    real = os.path.realpath(literal)
    if _trusted(real) or real.startswith(NOT_FILES) or not os.path.isfile(real) \
            or _written_by_tests(real):
        return
    _READ_AGENTS[1 if _IN_TEST else 0] = True
    _PENDING.clear()


def _tests_writing(target: object) -> None:
    """The tests open ``target`` for writing: its identity is taken at the next spawn, check
    or write (while nothing else runs); opened at any other time, it is forgotten."""
    _settle()
    if not isinstance(target, (str, bytes)):
        return
    path = os.path.realpath(os.fsdecode(target))
    if not any(_READ_AGENTS) and _opened_by_tests() and _quiet():
        _PENDING.add(path)
    else:
        _WROTE.pop(path, None)


def _written_by_tests(path: str) -> bool:
    _settle()
    real = os.path.realpath(path)
    known = _WROTE.get(real)
    return known is not None and _identity(real) == known


def _tests_own_code(path: str) -> bool:
    """A file the tests wrote themselves (while nothing else ran, unchanged since), or one
    whose code is a block of the task's tests."""
    if _written_by_tests(path):
        return True
    try:
        if os.path.islink(path) or os.path.getsize(path) > (1 << 20):
            return False
        with open(path, encoding="utf-8") as handle:
            code = _normal_lines(handle.read())
    except (OSError, UnicodeDecodeError):
        return False
    return code in _tests_text()


def _agent_path(value: object) -> str | None:
    """``value`` (as given, or resolved through symlinks) when either lies outside the
    verifier's closure and the tests and is not the tests' own code; else None."""
    if not isinstance(value, (str, bytes)) or not _TRUSTED:
        return None
    literal = os.path.abspath(os.fsdecode(value))
    if not os.path.lexists(literal):
        return None  # nothing there to load (a cache the loader only probes for)
    for path in dict.fromkeys((literal, os.path.realpath(literal))):
        if not _trusted(path) and not _tests_own_code(path):
            return path
    return None


_IN_HOOK = False
_ALARMS: set[tuple[str, str]] = set()


def _alarm(how: str, path: str) -> None:
    if (how, path) in _ALARMS:
        return
    _ALARMS.add((how, path))
    _emit({"e": "alarm", "how": how, "path": _text(path)})


def _generated(caller: str, frame: Any = None) -> bool:
    """Code a trusted library generated itself; ``doctest`` of a file of the tests (or of
    the closure) and ``timeit`` of callables count, the text of anything else does not."""
    if not _trusted(caller):
        return False
    if caller.endswith("/doctest.py") and frame is not None:
        test = frame.f_locals.get("test")
        where = getattr(test, "filename", None)
        return isinstance(where, str) and os.path.isabs(where) and os.path.lexists(where) \
            and _trusted(os.path.realpath(where))
    if caller.endswith("/timeit.py") and frame is not None:  # a callable reads "_stmt()"
        given = [frame.f_locals.get(name) for name in ("stmt", "setup")]
        return all(text in TIMEIT_CALLS for text in given)
    return any(part in caller for part in CODE_GENERATORS)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    global _IN_HOOK
    if _IN_HOOK or event not in WATCHED:
        return
    _IN_HOOK = True
    try:
        if _PENDING and event in SPAWNS:  # before anything else can run
            _settle()
        if event in SPAWNS:
            # A daemon the test started lives until the test ends (then it is reaped),
            # except that none meets the task's own helper: a program of /tests a test
            # runs (its verdict on stdout is what a daemon of agent code would forge).
            if _IN_TEST and _CHANNEL is not None and _runs_tests_helper(args):
                _reap_orphans("spawn")
        elif event == "open" and args:
            mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
            if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & WRITE_FLAGS):
                if _CHANNEL is not None:
                    _tests_writing(args[0])
                return
            caller = sys._getframe(1).f_code.co_filename
            if _CHANNEL is not None and caller not in LOADER_FRAMES:
                _reading(args[0])
            if caller in LOADER_FRAMES or caller.endswith("/runpy.py"):
                path = _agent_path(args[0])
                if path is not None:
                    _alarm("load", path)
        elif event == "exec" and args:
            filename = getattr(args[0], "co_filename", None)
            if isinstance(filename, str) and os.path.isabs(filename) \
                    and os.path.lexists(filename):
                path = _agent_path(filename)
                if path is not None:
                    _alarm("exec", path)
            elif _IN_TEST:
                frame = sys._getframe(1)
                caller = frame.f_code.co_filename
                if not _generated(caller, frame):
                    _alarm("exec-string",
                           f"code compiled from a string ({filename}) run by {caller}")
        elif event == "ctypes.dlopen" and args:
            path = _agent_path(args[0])
            if path is not None:
                _alarm("dlopen", path)
        elif event == "pickle.find_class" and len(args) > 1 \
                and not _pickle_safe(str(args[0]), str(args[1])):
            _alarm("unpickle", f"{args[0]}.{args[1]}")
    except Exception:
        pass
    finally:
        _IN_HOOK = False


class _AgentCodeFinder:
    """Sits before the path finder and reports a module found outside the closure."""

    @classmethod
    def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> Any:
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(fullname, path, target)
        if spec is not None:
            places = [spec.origin] if spec.has_location else []
            places += list(spec.submodule_search_locations or [])
            for place in places:
                where = _agent_path(place)
                if where is not None:
                    _alarm("import", f"{fullname} from {where}")
        return spec


def _check_mappings() -> None:
    """At the end: an alarm for every file this process maps that the agent may have
    written (deleted or memfd files, files under the transfer roots outside the
    closure): an NSS module, an OpenSSL provider or a library loaded during the tests."""
    roots = frozenset(str(r).rstrip("/") for r in (_GRANT or {}).get("transfer_roots", []))
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return
    for line in lines:
        fields = line.split(None, 5)
        path = fields[5] if len(fields) == 6 else ""
        if not path or path.startswith("[") or path.startswith("anon_inode:"):
            continue
        if path.endswith(" (deleted)") or path.startswith("/memfd:") or (
                _below_any(path, roots) and not _trusted(path)):
            _alarm("mapping", path)


def _closure_plugins() -> list[tuple[str, Any]]:
    """(name, entry point) of every ``pytest11`` entry point whose distribution lies in the
    verifier's closure (this interpreter's prefixes, and, in a keyed session, trusted) and
    whose top-level module is found there too: what autoloading would load, minus
    everything on ``sys.path`` the agent can write (an editable install's source, the
    working directory)."""
    from importlib.machinery import PathFinder
    from importlib.metadata import distributions

    prefixes = _own_prefixes()

    def inside(path: str) -> bool:
        real = os.path.realpath(path)
        return any(real == p or real.startswith(p + "/") for p in prefixes) and (
            _CHANNEL is None or (_trusted(real) and _agent_path(path) is None))

    found: dict[str, Any] = {}
    for dist in distributions():
        where = str(getattr(dist, "_path", "") or "")
        if not where or not inside(where):
            continue
        for entry in dist.entry_points:
            if entry.group != "pytest11" or entry.name in found:
                continue
            spec = PathFinder.find_spec(entry.module.split(".")[0])
            places = [] if spec is None else [
                *([spec.origin] if spec.has_location and spec.origin else []),
                *list(spec.submodule_search_locations or [])]
            if places and all(inside(place) for place in places):
                found[entry.name] = entry
    return list(found.items())


def pytest_addhooks(pluginmanager: Any) -> None:
    """With autoloading off (the grader's environment), register the closure's own pytest
    plugins under their entry-point names, as autoloading would, after this plugin: the
    audit hook and the import finder are in place before any of their code runs, and
    ``-p no:NAME`` still blocks one."""
    if not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return
    for name, entry in _closure_plugins():
        if pluginmanager.is_blocked(name) or pluginmanager.get_plugin(name) is not None:
            continue
        plugin = entry.load()
        if pluginmanager.is_registered(plugin):
            continue
        pluginmanager.register(plugin, name=name)


_FREEZE_ALL = _CHANNEL is not None
"""Only in a keyed session (the scoring container): ``kill(-1)`` anywhere else would stop
every process the caller may signal."""
REAP_CAP_S = 5.0
"""How long the reaper may take to freeze what it kills; past it, an alarm (processes that
cannot be stopped are agent code's doing)."""


def _reap(before: set[int], why: str, cap: float = REAP_CAP_S,
          pick: Any = None) -> None:
    """Kill processes that did not exist at ``before`` (and are none of ours to keep), or
    those ``pick(pids now)`` names.

    Freeze first: ``kill(-1, SIGSTOP)`` stops every process of the container but this one
    and its init at once (the kernel signals them all under one lock), and again, until
    two scans in a row name the same processes to kill with every thread of each stopped
    after both (a process in the middle of a fork is not stopped yet, and its child, made
    after the kernel signalled the rest, may run: it shows in the scan after the one that
    found its parent stopped). A fork chain (each link forks its successor and exits)
    outran a reaper that listed processes and then signalled each: the pid it listed was
    gone, its successor not listed. Then each named process gets SIGKILL and every other
    one SIGCONT (not one that was stopped already). Past ``cap`` seconds, what is named
    dies anyway and an alarm says the agent's processes could not be frozen."""
    import time

    def targets() -> set[int]:
        now = _pids()
        found = set()
        for pid in (pick(now) if pick is not None else now - before) - _KEEP:
            info = _stat(pid)
            if info is None or pid in _SERVICE_PIDS or info[1] in _SERVICE_PIDS:
                continue
            found.add(pid)
        return found

    def worth_a_look() -> bool:
        """Any process to kill, or one that vanished as it was looked at (a fork chain's
        link may, its successor not listed yet): nothing is stopped without one."""
        for pid in _pids() - before - _KEEP - _SERVICE_PIDS:
            info = _stat(pid)
            if info is None or info[1] not in _SERVICE_PIDS:
                return True
        return False

    # ``pick``'s callers have looked already (an orphan, a pid namespace of a test's own)
    if not _FREEZE_ALL or (pick is None and not worth_a_look()):
        return
    held = {pid for pid in _pids() if _state(pid) in ("T", "t")}
    deadline = time.monotonic() + cap
    doomed: set[int] = set()
    try:
        earlier: set[int] | None = None  # the last scan's, when all were stopped then
        while True:
            with contextlib.suppress(ProcessLookupError):  # none left but these two
                os.kill(-1, signal.SIGSTOP)  # all but this process and the container's init
            doomed = targets()
            settled = all(_frozen(pid) for pid in doomed)
            if settled and doomed == earlier:
                break
            if time.monotonic() > deadline:
                _alarm("reaper", f"processes a test left could not be frozen within "
                                 f"{cap:g}s ({len(doomed)} killed)")
                break
            # a child forked just before its parent stopped shows in the next scan
            earlier = doomed if settled else None
            time.sleep(0.001)
        for pid in doomed:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    finally:
        for pid in _pids() - doomed - held - {os.getpid(), 1}:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
    if doomed:
        _emit({"e": "reaped", "n": len(doomed), "when": why})


if _CHANNEL is not None:
    _KEEP = _parents(os.getpid()) | {1, int(_GRANT.get("broker", 0) if _GRANT else 0),
                                     int(_GRANT.get("broker_pid", 0) if _GRANT else 0)}
    _GRADER_PIDS = _grader_pids()
    _emit({"e": "open", "pid": os.getpid(), "nodump": _DUMPABLE_OFF,
           "python": sys.version.split()[0], "argv": _text(" ".join(sys.argv))})
    sys.addaudithook(_audit)
    from importlib.machinery import PathFinder as _PathFinder

    _at = next((i for i, f in enumerate(sys.meta_path) if f is _PathFinder), len(sys.meta_path))
    sys.meta_path.insert(_at, _AgentCodeFinder)
    for _name, _module in list(sys.modules.items()):  # what ran before this plugin did
        if _name == "__main__":
            continue  # pytest's own entry point, which the broker keyed by its command line
        _places = [getattr(_module, "__file__", None)]
        _places += [p for p in (getattr(_module, "__path__", None) or [])
                    if isinstance(p, str)]
        for _place in _places:
            _where = _agent_path(_place)
            if _where is not None:
                _alarm("import", f"{_name} from {_where} (before the attestation plugin)")
    _finders: list[Any] = [*sys.meta_path, *sys.path_hooks]
    for _hook in _finders:  # a finder such a module left behind
        for _call in (getattr(_hook, "find_spec", None), getattr(_hook, "find_module", None),
                      _hook):
            _code = getattr(getattr(_call, "__func__", _call), "__code__", None)
            _where = _agent_path(_code.co_filename) if _code is not None else None
            if _where is not None:
                _alarm("import", f"a module finder from {_where} (before the attestation "
                                 "plugin)")
    atexit.register(_bye)  # atexit runs last-in first: this one last of all
    atexit.register(lambda: _emit({"e": "close"}))
    atexit.register(_check_mappings)  # atexit runs last-in first: before the close

_SESSION_PIDS: set[int] = set()
_SEEN = 0
"""Items pytest collected (before any hook removed or deselected one)."""
_KINDS: dict[tuple[str, str], str] = {}
"""(nodeid, phase) -> what caused that phase's skip or xfail (see :func:`_cause`)."""


def pytest_configure(config: Any) -> None:
    inipath = getattr(config, "inipath", None)
    if inipath is not None:
        where = _agent_path(str(inipath))
        if where is not None:
            _alarm("config", where)


def pytest_sessionstart(session: Any) -> None:
    global _SESSION_PIDS
    _SESSION_PIDS = _pids()
    option = session.config.option
    _emit({"e": "start", "collect_only": bool(getattr(option, "collectonly", False)),
           "rootdir": _text(session.config.rootpath)})


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _emit({"e": "collect-error", "id": _text(report.nodeid)})
    elif report.skipped:  # a module that skipped itself at import
        _emit({"e": "collect-skip", "id": _text(report.nodeid)})


def pytest_itemcollected(item: Any) -> None:
    global _SEEN
    _SEEN += 1


def _deselected_by() -> str:
    """``args``: pytest's own ``-k``, ``-m`` or ``--deselect`` (test.sh's command line);
    ``runtime``: a hook of the tests' (whose choice may follow the agent's state)."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name != __file__ and "/pluggy/" not in name:
            return "args" if "/_pytest/" in name and _trusted(name) else "runtime"
        frame = frame.f_back
    return "runtime"


def pytest_deselected(items: Any) -> None:
    how = _deselected_by()
    chunk: list[str] = []
    for item in [*list(items), None]:
        node = None if item is None else _text(item.nodeid)[:300]
        if chunk and (node is None or len(json.dumps([*chunk, node])) > MAX_IDS_JSON):
            _emit({"e": "deselected", "n": len(chunk), "ids": chunk, "how": how})
            chunk = []
        if node is not None:
            chunk.append(node)


def pytest_collection_finish(session: Any) -> None:
    _emit({"e": "collected", "n": len(session.items), "seen": _SEEN})


def _cause(item: Any, call: Any, report: Any) -> str:
    """What made this phase skip or xfail: ``marker`` (a mark written in the tests'
    source, evaluated by pytest), ``empty`` (a parameter list with nothing in it) or
    ``runtime`` (``pytest.skip``/``pytest.xfail`` called, or a mark added at run time)."""
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) > 2 else ""
    if "got empty parameter set" in reason:
        return "empty"
    if hasattr(report, "wasxfail"):
        raised = getattr(call, "excinfo", None)
        imperative = raised is not None and raised.errisinstance(_pytest.xfail.Exception) \
            and not str(getattr(raised.value, "msg", "")).startswith("[NOTRUN]")
        marked = _stash_get(item, "_pytest.skipping", "xfailed_key") is not None
        if not (marked and not imperative and _marked_by_source(item, ("xfail",))):
            return "runtime"
        return "marker" if _fixed_conditions(item, "xfail") else "condition"
    if _raised_by_marks(call) and _marked_by_source(item, ("skip", "skipif")):
        return "marker" if _fixed_conditions(item, "skipif") else "condition"
    return "runtime"


def _raised_by_marks(call: Any) -> bool:
    """The skip was raised where pytest evaluates skip marks (``_pytest/skipping.py``), not
    by ``pytest.skip()`` in a fixture, a test or a hook."""
    raised = getattr(getattr(call, "excinfo", None), "value", None)
    trace = getattr(raised, "__traceback__", None)
    last = ""
    while trace is not None:
        name = trace.tb_frame.f_code.co_filename
        if not name.endswith("/_pytest/outcomes.py"):
            last = name
        trace = trace.tb_next
    return last.endswith("/_pytest/skipping.py") and _trusted(last)


def pytest_runtest_logreport(report: Any) -> None:
    event = {"e": "report", "id": _text(report.nodeid), "when": str(report.when),
             "outcome": str(report.outcome), "xfail": hasattr(report, "wasxfail")}
    if report.skipped or hasattr(report, "wasxfail"):
        event["skip"] = _KINDS.pop((report.nodeid, report.when), "runtime")
    event.update(_evidence(report))
    for key in ("out", "repr", "msg"):  # escaping can grow text: drop the largest first
        if len(json.dumps(event)) <= MAX_EVENT:
            break
        event.pop(key, None)
    _emit(event)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    global _IN_TEST
    _IN_TEST = True
    _READ_AGENTS[1] = False


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    global _IN_TEST
    _IN_TEST = False
    if _CHANNEL is not None:  # orphans of agent code a fixture ran
        _reap_orphans("orphans")


_FIXTURE_PROCS: dict[int, set[int]] = {}
"""A wider-scoped fixture (module, class, package, session) -> the processes its setup
made: a daemon of agent code such a fixture started (the agent's ``start.sh`` that puts
its server in the background) lives until that fixture is finalized, not only until the
first test that asked for it ends. It is still reaped before a program of /tests runs."""


def _reap_orphans(why: str) -> None:
    """Kill processes made since the session started whose parent is gone (daemons), and
    every process below one (a fork chain's next link, whose parent is still alive). At a
    test's end (``orphans``) a live wider-scoped fixture's processes are spared."""
    now = _pids()
    spared = set().union(*_FIXTURE_PROCS.values()) if why == "orphans" else set()
    if any((_stat(p) or (-1, -1))[0] in (0, 1) for p in now - _SESSION_PIDS - _KEEP - spared):
        _reap(set(), why, pick=lambda pids: _orphans_and_below(pids, spared))


def _orphans_and_below(now: set[int], spared: set[int] | None = None) -> set[int]:
    parents = {pid: (_stat(pid) or (-1, -1))[0] for pid in now - _SESSION_PIDS}
    found: set[int] = set()
    for pid in parents:
        here, hops = pid, 0
        while here in parents and hops < 4096:  # up through processes made since the start
            if parents[here] in (0, 1):
                if here not in _KEEP and (spared is None or here not in spared):
                    found.add(pid)
                break
            here, hops = parents[here], hops + 1
    return found


try:
    import pytest as _pytest

    @_pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(item: Any, call: Any) -> Any:
        made = yield
        report = made.get_result()
        if report.skipped or hasattr(report, "wasxfail"):
            _KINDS[(report.nodeid, report.when)] = _cause(item, call, report)

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(fixturedef: Any, request: Any) -> Any:
        wide = _CHANNEL is not None and getattr(fixturedef, "scope", "function") != "function"
        before = _pids() if wide else set()
        yield
        if wide:
            made = _pids() - before - _KEEP
            if made:
                _FIXTURE_PROCS[id(fixturedef)] = made

    def pytest_fixture_post_finalizer(fixturedef: Any, request: Any) -> None:
        # its daemons are orphans like any other from here: reaped when this test ends
        _FIXTURE_PROCS.pop(id(fixturedef), None)

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item: Any) -> Any:
        before = _pids()
        yield
        if _CHANNEL is not None:  # whatever the test body started dies with it
            _reap(before, "test")

    def _finish(session: Any, exitstatus: Any) -> None:
        _emit({"e": "finish", "exitstatus": int(exitstatus),
               "failed": int(getattr(session, "testsfailed", 0)),
               "collected": int(getattr(session, "testscollected", 0)),
               "stopped": bool(getattr(session, "shouldfail", False)
                               or getattr(session, "shouldstop", False))})

    pytest_sessionfinish = _pytest.hookimpl(trylast=True)(_finish)
except ImportError:  # imported outside pytest: nothing to attest
    pass
