"""TermGrade's ``sitecustomize`` for every Python of the scoring container; copied in at
scoring time and found first through ``PYTHONPATH`` (the grader's read-only directory), or,
where test.sh set a ``PYTHONPATH`` of its own without it, run from there by the read-only
startup archive at the interpreter's standard-library zip path (``pair/containers.py:
startup_mounts``), with ``__file__`` naming this file in the grader's directory.

In a Python that runs the verifier's own code (``-c`` text the tests wrote, a script in
``/tests``, ``-m`` of a module the verifier's closure provides, pytest) it puts the
closure first for every top-level module the closure or the grader's directory provides:
a ``hashlib.py``, ``pytest.py`` or a file named like the plugin, left by the agent in the
working directory, cannot stand in for them. Any other module is found as Python always
finds it, so a test that runs the agent's package with ``python -c`` or ``-m`` from
``/app`` (``cwd`` first on ``sys.path``) still gets the agent's package. In the agent's
own programs (``python3 /app/x.py``) it changes nothing. Then it runs the image's own
``sitecustomize`` (Debian's), as Python would have.

Kept free of TermGrade imports and of syntax newer than Python 3.8, and cheap: every
Python process of the scoring container runs it, so it imports nothing Python has not
loaded at start (no ``json``, ``typing``, ``contextlib`` or ``importlib.machinery``:
they cost ~10 ms per process), and nothing found along ``sys.path`` at all, not even
``__future__`` (its annotations are strings): where an agent directory is on the start-up
path, such a module would be the agent's, run before anything here can look.
"""

import os
import sys

try:  # loaded at start (CPython): importlib.machinery is not
    from _frozen_importlib_external import PathFinder
except ImportError:  # another implementation
    from importlib.machinery import PathFinder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GRADER = os.path.dirname(os.path.abspath(__file__))
CLOSURE_FILE = "closure.paths"
"""The closure's directories and files, NUL-separated (the grader stages it)."""


def _register() -> None:
    """Tell the grader's broker that this Python started, and wait until it has read the
    command line and working directory: no code but the closure's and the grader's has
    run in this process yet, so that is what it started as (agent code could rewrite its
    command line in memory later; a session key goes by this record). ``_socket`` is
    built in: nothing is imported."""
    try:
        with open(os.path.join(GRADER, "broker-socket"), encoding="utf-8") as handle:
            name = handle.read().strip()
        if not name:
            return
        import _socket

        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
        try:
            conn.settimeout(10)
            conn.connect("\0" + name + ".started")
            conn.recv(1)
        finally:
            conn.close()
    except (OSError, ImportError, AttributeError):
        pass  # no broker here (the agent's container), or it has ended


_register()


def _roots() -> "list[str]":
    """The closure's directories and files, and the grader's directory."""
    try:
        with open(os.path.join(GRADER, CLOSURE_FILE), "rb") as handle:
            roots = [os.fsdecode(p).rstrip("/") for p in handle.read().split(b"\0") if p]
    except OSError:
        return []
    roots.append(GRADER)
    return roots


_ROOTS = _roots()


def _trusted() -> "list[str]":
    return [entry for entry in sys.path if entry and any(
        entry == root or entry.startswith(root + "/") for root in _ROOTS)]


def _argv() -> "list[str]":
    return list(getattr(sys, "orig_argv", sys.argv))[1:]


def _pytest_process() -> bool:
    argv = _argv()
    if "-m" in argv and argv.index("-m") + 1 < len(argv):
        return argv[argv.index("-m") + 1] in ("pytest", "py.test")
    first = next((a for a in argv if not a.startswith("-")), "")
    return _is_pytest(first)


def _verifier_process() -> bool:
    argv = _argv()
    for at, arg in enumerate(argv):
        if arg == "-c":
            return True
        if arg == "-m":
            name = argv[at + 1].split(".")[0] if at + 1 < len(argv) else ""
            return bool(name) and _closure_has(name)
        if arg.startswith("-"):
            continue
        path = os.path.realpath(arg)
        return path.startswith("/tests/") or path.startswith(GRADER + "/") or _is_pytest(path)
    return False


def _is_pytest(path: str) -> bool:
    return os.path.basename(path) in ("pytest", "py.test")


_TRUSTED = _trusted()


def _closure_has(name: str) -> bool:
    return name in sys.builtin_module_names or PathFinder.find_spec(name, _TRUSTED) is not None


def _drop_cwd() -> None:
    """A pytest run from an agent directory does not search it for modules: pytest later
    imports its plugins (TermGrade's among them) through its own finder, ahead of this
    one. The tests' own directories are still put on the path by pytest itself."""
    cwd = os.path.realpath(os.getcwd())
    if any(cwd == root or cwd.startswith(root + "/") for root in [*_TRUSTED, "/tests"]):
        return
    sys.path[:] = [e for e in sys.path if e and os.path.realpath(e) != cwd]


class _ClosureFirst:
    """A top-level module the closure provides comes from the closure.

    ``sealed``: in a pytest process that will load the grader's plugin, until the plugin
    loads (it unseals), a top-level name the closure lacks is looked up only in the
    tests' directories, never along the rest of ``sys.path``: what pytest's own start
    imports, the standard library's probes for modules Linux lacks among them (``copy``
    tries ``org.python.core``), cannot be a module in an agent directory on
    ``PYTHONPATH`` or an editable install's path, run before anything can look.
    ``guarded``: in every process this finder serves, until the plugin loads (it unguards:
    its agent-code finder reports from there, and a test's ``importorskip`` of the agent's
    module is the test's), the same holds for a name the closure's own code asks for
    (:func:`_closure_imports`): a runner in ``/tests`` that calls ``pytest.main``, a helper
    there (which never loads the plugin) that imports ``dataclasses``."""

    pytest_process = False
    sealed = False
    guarded = False

    @classmethod
    def find_spec(cls, fullname: str, path: "Any" = None, target: "Any" = None) -> "Any":
        if path is not None or "." in fullname:
            return None
        if fullname == "pytest" and cls.pytest_process:
            _drop_cwd()
        spec = PathFinder.find_spec(fullname, _TRUSTED, target)
        if spec is None and (cls.sealed or (cls.guarded and (
                fullname in PROBED or _closure_imports()))) and not _built_in(fullname):
            tests = [e for e in sys.path if e == "/tests" or e.startswith("/tests/")]
            spec = PathFinder.find_spec(fullname, tests, target) if tests else None
            if spec is None:
                raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return spec


PROBED = ("org", "nt", "msvcrt", "_winapi", "winreg")
"""What the standard library and pytest probe for on Linux and never find there (``copy``
and ``pickle`` try ``org.python.core``): refused an agent directory whoever asks, the
modules of :data:`_DATA_IMPORTS` too (round 17: ``import pickle`` in a helper)."""
_DATA_IMPORTS = ("pickle", "copyreg", "_pickle", "shelve", "multiprocessing", "runpy",
                 "pkgutil", "unittest", "logging", "pydoc", "doctest")
"""Closure modules that import what their caller or input names (unpickling the agent's
object imports the agent's module by design: that input is code, whoever reads it;
``runpy.run_module("pkg")``, a test loader, ``logging.config``'s factories), not a name
of their own choosing."""


def _closure_imports() -> bool:
    """Is the code asking for a module the closure's own (the import machinery passed
    over): ``copy`` probing ``org.python.core``, pytest's start importing its optional
    helpers? Such code never needs a module of an agent directory; the tests' own code
    (a file in ``/tests``, ``-c`` text) and the agent's programs import what they like."""
    frame: Any = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        if not (module.startswith("importlib") or module == "_frozen_importlib_external"
                or frame.f_code.co_filename.startswith("<frozen importlib")):
            break
        frame = frame.f_back
    if frame is None:
        return False
    module = frame.f_globals.get("__name__") or ""
    if module.split(".", 1)[0] in _DATA_IMPORTS:
        return False
    where = frame.f_code.co_filename
    return any(where == root or where.startswith(root + "/") for root in _ROOTS)


def _built_in(name: str) -> bool:
    """Is ``name`` a module the interpreter has in itself (built in, or frozen), which the
    finders after this one provide?"""
    imp = sys.modules.get("_imp")
    return name in sys.builtin_module_names or bool(
        imp is not None and imp.is_frozen(name))


def _plugin_coming() -> bool:
    """Does ``PYTEST_PLUGINS`` name a module of the grader's directory (its plugin, which
    unseals :class:`_ClosureFirst` when pytest imports it)?"""
    for name in os.environ.get("PYTEST_PLUGINS", "").split(","):
        name = name.strip()
        if name and name.isidentifier() and os.path.isfile(os.path.join(GRADER, name + ".py")):
            return True
    return False


if _TRUSTED and _verifier_process():
    _ClosureFirst.pytest_process = _pytest_process()
    _ClosureFirst.guarded = _plugin_coming()
    _ClosureFirst.sealed = _ClosureFirst.pytest_process and _ClosureFirst.guarded
    sys.meta_path.insert(0, _ClosureFirst)


def _image_sitecustomize() -> None:
    """Run the next ``sitecustomize`` on the closure's path (the image's), if any."""
    for entry in _TRUSTED:
        if entry == GRADER or entry.endswith(".zip"):
            # the standard-library zip path holds the grader's own startup directory
            # (termgrade.scoring.pair.containers.stage_startup), never the image's hook:
            # running it would run this file again
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            with open(candidate, encoding="utf-8") as handle:
                code = compile(handle.read(), candidate, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": candidate})
            return


# the image's hook failing must not stop Python (contextlib.suppress costs an import)
try:  # noqa: SIM105
    _image_sitecustomize()
except Exception:
    pass
