"""Find test code that loads the agent's code into the verifier's own process, statically.

The verifier runs pytest in the container the agent worked in, so whatever lies under
/app (or /root, /home, /tmp, /srv, /workspace) may be the agent's. Imported or executed
inside pytest, that code can patch pytest, fake results or ``os._exit(0)``; run in a
subprocess, it can only answer. Each Python file under ``tests/`` is read with
:mod:`ast` for

* import-path changes that name an agent path: ``sys.path.insert`` / ``append`` /
  ``extend``, assignments to ``sys.path`` or a slice of it, ``site.addsitedir``, pytest's
  ``monkeypatch.syspath_prepend``, and ``PYTHONPATH`` set in this process
  (``os.environ[...] =``, ``os.environ.setdefault`` / ``update``, ``os.putenv``,
  ``monkeypatch.setenv``);
* loaders (:data:`LOADERS`: ``importlib.import_module``, ``__import__``,
  ``spec_from_file_location``, ``SourceFileLoader``, ``runpy.run_path`` / ``run_module``,
  ``exec``, ``eval``, ...) whose arguments name an agent path, or that follow such an
  import-path change (a change at module level runs before everything else; one inside a
  function, before what comes after it in the file); a ``compile`` that is never run is
  a syntax check, not a load;
* data loaders that run code the data names (:data:`DATA_LOADERS`: ``pickle.load``,
  ``marshal.loads``, ``logging.config.fileConfig``, ``yaml.unsafe_load``...) given an
  agent path: the grader also alarms on them at run time, where it can;
* native libraries loaded from an agent path: ``ctypes.CDLL`` / ``PyDLL``,
  ``ctypes.cdll.LoadLibrary``.

Besides, every loader of a file (``spec_from_file_location``, ``SourceFileLoader``,
``run_path``...), every ``exec`` / ``eval``, data loader, ``ctypes`` load and ``sys.path``
change is judged by where its path or text comes from (:mod:`.pyorigin`): anything but
``/tests`` (``__file__`` and the folders above it up to ``/tests``), the verifier's Python
(standard library, site directories) and the file's own literals is the agent's, a path
computed at run time included (a parameter, a fixture's ``tmp_path``, ``os.environ``, a
relative path). A plain ``import numpy`` is the image's and is not judged.

An expression *names an agent path* when one of its strings (f-string text included;
``:``-separated lists such as a PYTHONPATH value part by part) is an agent root or lies
below one, or when it uses a variable assigned such an expression anywhere in the file
(``APP = Path("/app")``). Reading the agent's files as text (``open``,
``Path.read_text``) and running them in a subprocess are not findings.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from termgrade.audit.documents import SourceFile
from termgrade.audit.pyorigin import Origin, Origins
from termgrade.core.pyparse import parse
from termgrade.records.issues import Issue

AGENT_ROOTS = ("/app", "/root", "/home", "/tmp", "/srv", "/workspace", "/opt", "/etc",
               "/var", "/usr/local", "/solution", "/data", "/mnt", "/media")
"""Directories whose contents reach the scoring container from the agent's."""
VERIFIER_ROOTS = ("/opt/venv", "/usr/local/lib/python", "/etc/python", "/etc/ld.so")
"""Parts of those the grader keeps as the image made them (the verifier's closure)."""

FIX = ("run the agent's code in a subprocess, e.g. "
       "subprocess.run([sys.executable, ...], cwd='/app')")

PATH_CALLS = frozenset({"sys.path.insert", "sys.path.append", "sys.path.extend",
                        "site.addsitedir"})
LOADERS = frozenset({"import_module", "importorskip", "spec_from_file_location",
                     "SourceFileLoader", "SourcelessFileLoader", "ExtensionFileLoader",
                     "load_source", "load_compiled", "load_dynamic", "run_path", "run_module"})
"""Loaders matched by the last part of their dotted name (``importlib.util.X``, ``X``)."""
PATH_LOADERS = {"spec_from_file_location": (1, "location"), "SourceFileLoader": (1, "path"),
                "SourcelessFileLoader": (1, "path"), "ExtensionFileLoader": (1, "path"),
                "load_source": (1, "pathname"), "load_compiled": (1, "pathname"),
                "load_dynamic": (1, "pathname"), "run_path": (0, "path_name")}
"""Loaders of a file, with where their path argument goes (position, keyword)."""
DATA_TEXT = frozenset({"pickle.loads", "dill.loads", "cloudpickle.loads", "marshal.loads",
                       "yaml.unsafe_load", "logging.config.dictConfig"})
"""Data loaders given the data itself (bytes, text, a dict), not a file or its path."""
BUILTIN_LOADERS = frozenset({"exec", "eval", "__import__"})
"""Builtins that load code, matched unless the file binds the name itself."""
DATA_LOADERS = frozenset({"pickle.load", "pickle.loads", "pickle.Unpickler", "dill.load",
                          "dill.loads", "cloudpickle.load", "cloudpickle.loads", "joblib.load",
                          "marshal.load", "marshal.loads", "shelve.open", "yaml.unsafe_load",
                          "logging.config.fileConfig", "logging.config.dictConfig",
                          "torch.load"})
"""Loaders of data that can name and run code, matched by their full dotted name."""
NATIVE_LOADERS = frozenset({"CDLL", "PyDLL", "LoadLibrary"})
"""``ctypes`` names that load a shared library."""
MAX_SHOWN = 5
"""Findings quoted in a check's reason; the rest are counted."""

_SNIPPET = 60


@dataclass(frozen=True)
class AgentCodeFinding(Issue):
    """One place where a test file lets agent code into its own process: an
    :class:`~termgrade.records.issues.Issue` (an error of the ``agent_code_isolated`` check,
    fixed as :data:`FIX` says) whose ``where`` is ``path:line``."""

    path: str
    line: int
    check: str = field(init=False, default="agent_code_isolated")
    where: str = field(init=False, default="")
    fix: str = field(default=FIX, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", f"{self.path}:{self.line}")

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def is_agent_path(text: str) -> bool:
    """Whether ``text``, or one of its ``:``-separated parts, is an agent root or below one."""
    return any(_under(part.strip(), AGENT_ROOTS) and not _under(part.strip(), VERIFIER_ROOTS)
               for part in text.split(":"))


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith((root + "/", root + "3")) for root in roots)


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


def _snippet(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."


def _bindings(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """``(name, value)`` for every simple binding of a name: ``=``, ``:=``, ``for``, ``with``."""
    found: list[tuple[str, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            found += [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            if isinstance(node.target, ast.Name) and node.value is not None:
                found.append((node.target.id, node.value))
        elif isinstance(node, ast.For | ast.AsyncFor) and isinstance(node.target, ast.Name):
            found.append((node.target.id, node.iter))
        elif isinstance(node, ast.With | ast.AsyncWith):
            found += [(item.optional_vars.id, item.context_expr) for item in node.items
                      if isinstance(item.optional_vars, ast.Name)]
    return found


_NOTHING: tuple[bool, frozenset[str]] = (False, frozenset())


def _mentions(tree: ast.Module) -> dict[int, tuple[bool, frozenset[str]]]:
    """Per node (by id): whether its subtree holds an agent-path string, and the names it
    reads. One bottom-up pass (``ast.walk`` lists parents before children), so asking of
    any node later costs nothing, however often the taint loop asks."""
    summary: dict[int, tuple[bool, frozenset[str]]] = {}
    for node in reversed(list(ast.walk(tree))):
        constant = (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and is_agent_path(node.value))
        names: frozenset[str] = frozenset((node.id,)) if isinstance(node, ast.Name) \
            else frozenset()
        for child in ast.iter_child_nodes(node):
            child_constant, child_names = summary.get(id(child), _NOTHING)
            constant = constant or child_constant
            if child_names:
                names = names | child_names if names else child_names
        if constant or names:
            summary[id(node)] = (constant, names)
    return summary


class _FileScan:
    """The findings of one parsed test file."""

    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.aliases: dict[str, str] = {}
        self.local: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self.aliases.update({a.asname: a.name for a in node.names if a.asname})
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.aliases.update({a.asname or a.name: f"{node.module}.{a.name}"
                                     for a in node.names})
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.local.add(node.name)
        self._mentions = _mentions(tree)
        bindings = _bindings(tree)
        self.local.update(name for name, _ in bindings)
        self.tainted: set[str] = set()
        grew = True
        while grew:
            new = {name for name, value in bindings
                   if name not in self.tainted and self.names_agent_path(value)}
            self.tainted |= new
            grew = bool(new)
        self.origins = Origins(tree, path, self.canonical)
        self.changes: list[tuple[ast.stmt | ast.expr, bool]] = []
        """Import-path changes to an agent path, with whether each runs at import time."""
        self.loaders: list[ast.Call] = []
        self.findings: list[AgentCodeFinding] = []
        self._scan(tree, at_import=True)

    def names_agent_path(self, node: ast.AST) -> bool:
        """Whether ``node`` holds an agent-path string or a name tainted by one."""
        constant, names = self._mentions.get(id(node), _NOTHING)
        return constant or not names.isdisjoint(self.tainted)

    def canonical(self, node: ast.expr) -> str:
        """``node``'s dotted name with its first part resolved through the file's imports."""
        head, dot, rest = _dotted(node).partition(".")
        return self.aliases.get(head, head) + dot + rest

    def _scan(self, node: ast.AST, at_import: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = at_import and not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Assign | ast.AugAssign) and self._changes_path(child):
                self.changes.append((child, inner))
            elif isinstance(child, ast.Call):
                self._call(child, inner)
            self._scan(child, inner)

    def _is_pythonpath(self, target: ast.expr) -> bool:
        return (isinstance(target, ast.Subscript) and self.canonical(target.value) == "os.environ"
                and isinstance(target.slice, ast.Constant) and target.slice.value == "PYTHONPATH")

    def _changes_path(self, node: ast.Assign | ast.AugAssign) -> bool:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            base = target.value if isinstance(target, ast.Subscript) else target
            if self.canonical(base) == "sys.path":
                return self.names_agent_path(node.value) or _agent(self.origins.path(node.value))
            if self._is_pythonpath(target):
                return self.names_agent_path(node.value)
        return False

    def _sets_pythonpath(self, call: ast.Call, name: str) -> bool:
        if name == "os.environ.update":
            pairs: list[tuple[object, ast.expr]] = [(kw.arg, kw.value) for kw in call.keywords]
            for arg in call.args:
                if isinstance(arg, ast.Dict):
                    pairs += [(k.value, v) for k, v in zip(arg.keys, arg.values, strict=True)
                              if isinstance(k, ast.Constant)]
            return any(key == "PYTHONPATH" and self.names_agent_path(value)
                       for key, value in pairs)
        setter = name in ("os.environ.setdefault", "os.putenv") or name.endswith(".setenv")
        return (setter and len(call.args) >= 2 and isinstance(call.args[0], ast.Constant)
                and call.args[0].value == "PYTHONPATH" and self.names_agent_path(call.args[1]))

    def _call(self, call: ast.Call, at_import: bool) -> None:
        name = self.canonical(call.func)
        last = name.rsplit(".", 1)[-1]
        arguments = [*call.args, *(kw.value for kw in call.keywords)]
        named = any(self.names_agent_path(arg) for arg in arguments)
        own_helper = isinstance(call.func, ast.Name) and call.func.id in self.local
        path_call = name in PATH_CALLS or last == "syspath_prepend"
        builtin = name.removeprefix("builtins.")
        if path_call:
            placed = call.args[1:] if name == "sys.path.insert" else call.args[:1]
            if named or _agent(self.origins.path(ast.List(elts=list(placed), ctx=ast.Load()))):
                self.changes.append((call, at_import))
        elif self._sets_pythonpath(call, name):
            self.changes.append((call, at_import))
        elif last in NATIVE_LOADERS and name.startswith("ctypes."):
            origin = self._library(call.args[0]) if call.args else None
            if named or _agent(origin):
                self._found(call, "loads a native library from", origin)
        elif name in DATA_LOADERS:
            first = call.args[0] if call.args else None
            judge = self.origins.code if name in DATA_TEXT else self.origins.path
            origin = judge(first) if first is not None else None
            if named or _agent(origin):
                self._found(call, "runs code named by data from", origin)
        elif not own_helper and (last in LOADERS or builtin in BUILTIN_LOADERS):
            origin = self._loaded(call, last, builtin)
            if named or _agent(origin):
                self._found(call, "loads code from", origin)
            else:
                self.loaders.append(call)

    def _found(self, call: ast.Call, verb: str, origin: Origin | None) -> None:
        where = origin.why if origin is not None and origin.agent else "an agent path"
        self.findings.append(AgentCodeFinding(self.path, call.lineno,
                                              what=f"{_snippet(call)} {verb} {where}"))

    def _library(self, node: ast.expr) -> Origin | None:
        """A ``ctypes`` library: a bare name (``libc.so.6``) is the loader's to find."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and "/" not in node.value:
            return None
        return self.origins.path(node)

    def _loaded(self, call: ast.Call, last: str, builtin: str) -> Origin | None:
        """Where a loader's code comes from: a file loader's path, ``exec``'s or ``eval``'s
        text; None for a module loader (judged by the import-path changes before it)."""
        if builtin in ("exec", "eval"):
            return self.origins.code(call.args[0]) if call.args else None
        if last not in PATH_LOADERS:
            return None
        position, keyword = PATH_LOADERS[last]
        given = call.args[position] if len(call.args) > position else next(
            (kw.value for kw in call.keywords if kw.arg == keyword), None)
        return self.origins.path(given) if given is not None else None

    def results(self) -> list[AgentCodeFinding]:
        found = list(self.findings)
        for node, _ in self.changes:
            found.append(AgentCodeFinding(self.path, node.lineno,
                                 what=f"{_snippet(node)} puts an agent path on the import path"))
        for call in self.loaders:
            where = (call.lineno, call.col_offset)
            before = [node for node, at_import in self.changes
                      if at_import or (node.lineno, node.col_offset) < where]
            if before:
                line = min(node.lineno for node in before)
                found.append(AgentCodeFinding(self.path, call.lineno,
                                     what=f"{_snippet(call)} loads code after the import-path "
                                     f"change on line {line}"))
        return sorted(found, key=lambda f: f.line)


def _agent(origin: Origin | None) -> bool:
    return origin is not None and origin.agent


def file_findings(source: SourceFile) -> list[AgentCodeFinding]:
    """The findings of one Python file (none when it does not parse: ``tests_parse`` says so)."""
    try:
        tree = parse(source.text, source.path)
    except (SyntaxError, ValueError):
        return []
    return _FileScan(source.path, tree).results()


def agent_code_findings(sources: Iterable[SourceFile]) -> list[AgentCodeFinding]:
    """Every finding in the Python files among ``sources``."""
    return [finding for source in sources if source.path.endswith(".py")
            for finding in file_findings(source)]


def agent_code_reason(sources: Iterable[SourceFile]) -> str | None:
    """The ``agent_code_isolated`` check's reason: the findings and the fix, or None."""
    found = agent_code_findings(sources)
    if not found:
        return None
    shown = "; ".join(str(f) for f in found[:MAX_SHOWN])
    more = f" (+{len(found) - MAX_SHOWN} more)" if len(found) > MAX_SHOWN else ""
    return f"agent code would run inside pytest: {shown}{more}; fix: {FIX}"
