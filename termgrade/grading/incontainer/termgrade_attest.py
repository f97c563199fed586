"""TermGrade's attestation plugin for the verifier's pytest; copied in at scoring time.

pytest loads it through ``PYTEST_PLUGINS=termgrade_attest``, with plugin autoloading
off, before any conftest or test module. At import it:

1. makes this process non-dumpable, so no other process (the agent's code run by the
   tests is root too) can read its memory or open its files through ``/proc``;
2. reads and deletes its one-time key (no agent process exists in the scoring container
   before this point);
3. reports code loaded into this process from the agent's writable paths, through an
   audit hook and an import finder that run before that code does;
4. loads the image's own pytest plugins (never one from a writable path);
5. starts the task's declared services.

Every event is one numbered line signed with the key, written to ``/proc/1/fd/1``: a
pipe the host reads as it is written, which nothing inside can take back. Kept free of
TermGrade imports and of syntax newer than Python 3.8, so any verifier Python runs it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

CONFIG = "/run/termgrade/attest.json"
CHANNEL = "/proc/1/fd/1"
PREFIX = "TERMGRADE-ATTEST"
MAX_FIELD = 1000
PYTEST_TMP = "/tmp/pytest-of-"
LOADER_FRAMES = ("<frozen importlib._bootstrap_external>", "<frozen importlib._bootstrap>",
                 "<frozen zipimport>", "<frozen runpy>")


def _no_dump() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(4, 0, 0, 0, 0)) == 0  # PR_SET_DUMPABLE, 0
    except Exception:
        return False


def _take_config() -> dict[str, Any] | None:
    try:
        fd = os.open(CONFIG, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        data = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(CONFIG)
    try:
        config = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    return config if isinstance(config, dict) else None


class _Channel:
    def __init__(self, key: bytes) -> None:
        self.key = key
        self.seq = 0
        self.fd = os.open(CHANNEL, os.O_WRONLY | os.O_CLOEXEC)

    def emit(self, event: dict[str, Any]) -> None:
        payload = json.dumps(event, sort_keys=True, separators=(",", ":"))
        seq = self.seq
        self.seq += 1
        mac = hmac.new(self.key, f"{seq} {payload}".encode(), hashlib.sha256).hexdigest()
        # One write below PIPE_BUF: lines from different writers never interleave.
        os.write(self.fd, f"{PREFIX} {seq} {mac} {payload}\n".encode())


def _text(value: object) -> str:
    text = os.fsdecode(value) if isinstance(value, bytes) else str(value)
    return text[:MAX_FIELD]


_CONFIG = None if os.environ.get("TERMGRADE_ATTEST_NESTED") else _take_config()
_DUMPABLE_OFF = _no_dump() if _CONFIG is not None else False
_CHANNEL: _Channel | None = None
_ROOTS: tuple[str, ...] = ()
_SERVICES: list[subprocess.Popen[bytes]] = []
if _CONFIG is not None:
    try:
        _CHANNEL = _Channel(bytes.fromhex(str(_CONFIG["key"])))
        _ROOTS = tuple(str(p) for p in _CONFIG.get("writable", []))
    except (OSError, KeyError, ValueError):
        _CHANNEL = None
    # Nested pytest runs (a test that runs pytest) stay silent: they hold no key.
    os.environ["TERMGRADE_ATTEST_NESTED"] = "1"


def _emit(event: dict[str, Any]) -> None:
    if _CHANNEL is not None:
        _CHANNEL.emit(event)


_STARTED = time.time()


def _made_by_this_session(path: str) -> bool:
    """A file the tests wrote in pytest's tmp_path during this run (not carried in: the
    agent's files reached this container, with their ctime, before the plugin started)."""
    if not path.startswith(PYTEST_TMP):
        return False
    try:
        return os.lstat(path).st_ctime >= _STARTED
    except OSError:
        return False


def _agent_path(value: object) -> str | None:
    """``value`` (as given, or resolved through symlinks) when either lies in a writable
    path and is not the session's own tmp_path work; else None."""
    if not isinstance(value, (str, bytes)) or not _ROOTS:
        return None
    literal = os.path.abspath(os.fsdecode(value))
    if not os.path.lexists(literal):
        return None  # nothing there to load (a cache the loader only probes for)
    for path in dict.fromkeys((literal, os.path.realpath(literal))):
        if any(path == root or path.startswith(root + "/") for root in _ROOTS) \
                and not _made_by_this_session(path):
            return path
    return None


_IN_HOOK = False
_ALARMS: set[tuple[str, str]] = set()


def _alarm(how: str, path: str) -> None:
    if (how, path) in _ALARMS:
        return
    _ALARMS.add((how, path))
    _emit({"e": "alarm", "how": how, "path": _text(path)})


def _audit(event: str, args: tuple[Any, ...]) -> None:
    global _IN_HOOK
    if _IN_HOOK or event not in ("open", "exec", "compile", "ctypes.dlopen"):
        return
    _IN_HOOK = True
    try:
        if event == "open" and args:
            path = _agent_path(args[0])
            if path is not None:
                caller = sys._getframe(1).f_code.co_filename
                if caller in LOADER_FRAMES or caller.endswith("/runpy.py"):
                    _alarm("load", path)
        elif event == "exec" and args:
            path = _agent_path(getattr(args[0], "co_filename", None))
            if path is not None:
                _alarm("exec", path)
        elif event == "compile" and len(args) > 1:
            path = _agent_path(args[1])
            if path is not None:
                _alarm("compile", path)
        elif event == "ctypes.dlopen" and args:
            path = _agent_path(args[0])
            if path is not None:
                _alarm("dlopen", path)
    except Exception:
        pass
    finally:
        _IN_HOOK = False


class _AgentCodeFinder:
    """Sits before the path finder and reports a module found in a writable path."""

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


def _image_plugins() -> list[str]:
    """pytest11 entry points of distributions outside the writable paths."""
    from importlib.metadata import distributions

    found: list[str] = []
    for dist in distributions():
        if _agent_path(str(getattr(dist, "_path", "") or "")) is not None:
            continue
        for entry in dist.entry_points:
            if entry.group == "pytest11" and entry.module not in found:
                found.append(entry.module)
    return found


if _CHANNEL is not None:
    _emit({"e": "start", "pid": os.getpid(), "nodump": _DUMPABLE_OFF,
           "python": sys.version.split()[0]})
    sys.addaudithook(_audit)
    from importlib.machinery import PathFinder as _PathFinder

    _at = next((i for i, f in enumerate(sys.meta_path) if f is _PathFinder), len(sys.meta_path))
    sys.meta_path.insert(_at, _AgentCodeFinder)

pytest_plugins = _image_plugins()


def _start_services() -> None:
    for number, service in enumerate((_CONFIG or {}).get("services", [])):
        log = open(f"/logs/verifier/service-{number}.log", "ab")  # noqa: SIM115
        _SERVICES.append(subprocess.Popen(
            ["/bin/bash", "-c", str(service["command"])], cwd=str(service.get("workdir", "/")),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True))
        ready = service.get("ready")
        if not ready:
            continue
        deadline = time.monotonic() + float(service.get("ready_timeout_sec", 30))
        ok = False
        while time.monotonic() < deadline:
            ok = subprocess.run(["/bin/bash", "-c", str(ready)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                check=False).returncode == 0
            if ok:
                break
            time.sleep(0.2)
        _emit({"e": "service", "n": number, "ready": ok})


def pytest_sessionstart(session: Any) -> None:
    if _CHANNEL is not None:
        _start_services()


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _emit({"e": "collect-error", "id": _text(report.nodeid)})


def pytest_collection_finish(session: Any) -> None:
    _emit({"e": "collected", "n": len(session.items)})


def pytest_runtest_logreport(report: Any) -> None:
    _emit({"e": "report", "id": _text(report.nodeid), "when": str(report.when),
           "outcome": str(report.outcome), "xfail": hasattr(report, "wasxfail")})


def _finish(session: Any, exitstatus: Any) -> None:
    _emit({"e": "finish", "exitstatus": int(exitstatus),
           "failed": int(getattr(session, "testsfailed", 0)),
           "collected": int(getattr(session, "testscollected", 0))})


try:
    import pytest as _pytest

    pytest_sessionfinish = _pytest.hookimpl(trylast=True)(_finish)
except ImportError:  # imported outside pytest: nothing to attest
    pass


def pytest_unconfigure(config: Any) -> None:
    for process in _SERVICES:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
