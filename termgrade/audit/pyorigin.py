"""Where a path or a piece of code a test file hands to a loader comes from, statically.

The rule of :mod:`termgrade.audit.agent_code`: code a test loads into pytest's own process
is the tests' own only when it comes from ``/tests`` (the tests' files, ``__file__`` and
the folders above it up to ``/tests``) or from the verifier's closure (the image's Python:
the standard library and the installed site directories), or when it is a literal of the
test file itself. Everything else is the agent's: a constant path elsewhere (``/tmp``,
``/application``), a relative one (read against the working directory, the agent's), and
any value computed at run time that the file does not pin to one of those (a function
parameter, a fixture, ``os.environ``, ``tempfile``, a call's result).

:class:`Origins` reads one parsed file: ``path(node)`` judges an expression used as a
file path (``Path(...)``, ``os.path.join``, ``/``, f-strings, ``.parent``,
``open(...)``), ``code(node)`` one used as code or data text (``open(P).read()``,
``Path(P).read_text()``, ``compile``, string building). Names are followed through every
simple binding in the file (``=``, ``for``, ``with``); a name with no binding, or bound as a
parameter or by an import, is computed at run time.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

TESTS_ROOT = "/tests"
CLOSURE_ROOTS = ("/opt/venv", "/usr/lib/python", "/usr/lib64/python", "/usr/local/lib/python",
                 "/usr/share/python", "/etc/python")
"""The verifier's closure as a path prefix (``python3.11`` and ``python3`` match too)."""

_PASS_FIRST = frozenset({"Path", "PurePath", "PosixPath", "PurePosixPath", "str", "bytes",
                         "os.fspath", "os.path.abspath", "os.path.realpath",
                         "os.path.normpath", "os.path.expanduser", "open", "io.open",
                         "codecs.open", "builtins.open", "os.fsencode", "os.fsdecode"})
"""Calls whose result lies where their first argument does."""
_SAME_OBJECT = frozenset({"resolve", "absolute", "expanduser", "as_posix", "with_name",
                          "with_suffix", "with_stem", "open", "__fspath__"})
"""Path methods whose result lies where the path does."""
_CHILDREN = frozenset({"glob", "rglob", "iterdir"})
"""Path methods whose results lie below the path."""
_READS = frozenset({"read", "read_text", "read_bytes", "readlines", "readline"})
_TEXT_METHODS = frozenset({"decode", "encode", "strip", "lstrip", "rstrip", "replace",
                           "format", "lower", "upper", "join", "splitlines"})
_TEXT_CALLS = frozenset({"compile", "textwrap.dedent", "textwrap.indent", "str", "bytes",
                         "inspect.cleandoc"})


@dataclass(frozen=True)
class Origin:
    """``kind``: ``tests``, ``closure``, ``literal`` (text of the file itself) or ``agent``;
    ``depth``: for ``tests``, how many folders below ``/tests``; ``why``: for ``agent``, a
    few words a reason quotes."""

    kind: str
    depth: int = 0
    why: str = ""

    @property
    def agent(self) -> bool:
        return self.kind == "agent"


RUNTIME = Origin("agent", why="a path computed at run time")
LITERAL = Origin("literal")
CLOSURE = Origin("closure")


def worst(origins: Iterable[Origin | None]) -> Origin | None:
    """The agent's if any is; else the shallowest ``tests``; None when all are None."""
    found = [o for o in origins if o is not None]
    agent = next((o for o in found if o.agent), None)
    if agent is not None or not found:
        return agent
    tests = [o for o in found if o.kind == "tests"]
    if tests:
        return min(tests, key=lambda o: o.depth)
    return found[0]


def constant_path(text: str) -> Origin:
    """A path written out: under ``/tests``, the closure, or the agent's."""
    if not text.startswith("/"):
        return Origin("agent", why=f"the relative path {text!r} (the working directory's)")
    path = posixpath.normpath(text)
    if path == TESTS_ROOT or path.startswith(TESTS_ROOT + "/"):
        return Origin("tests", path.count("/") - 1)
    if any(path == root or path.startswith((root + "/", root + "3")) for root in CLOSURE_ROOTS):
        return CLOSURE
    return Origin("agent", why=f"{path} (outside /tests and the verifier's Python)")


def _segments(node: ast.expr) -> int:
    """How many folders a joined segment goes down (``..`` goes up; unknown: one)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return sum(-1 if part == ".." else 1 for part in node.value.split("/")
                   if part not in ("", "."))
    return 1


def _down(origin: Origin | None, levels: int) -> Origin | None:
    if origin is None or origin.kind != "tests":
        return origin
    if origin.depth + levels < 0:
        return Origin("agent", why="a path above /tests")
    return Origin("tests", origin.depth + levels)


class Origins:
    """Judges expressions of one parsed file (``path``: its path in the task, such as
    ``tests/test_outputs.py``; ``canonical``: a dotted name resolved through the file's
    imports)."""

    def __init__(self, tree: ast.Module, path: str, canonical: Callable[[ast.expr], str]) -> None:
        self.canonical = canonical
        parts = path.split("/")
        self.file = (Origin("tests", len(parts) - 1) if parts[0] == "tests"
                     else Origin("agent", why="__file__ outside /tests"))
        self.bindings: dict[str, list[ast.expr | None]] = {}
        for name, value in _bindings(tree):
            self.bindings.setdefault(name, []).append(value)
        self._busy: set[tuple[str, str]] = set()

    def _name(self, name: str, mode: str) -> Origin | None:
        if name == "__file__":
            return self.file
        values = self.bindings.get(name)
        if not values or any(v is None for v in values):
            return Origin("agent", why=f"{name}, a value computed at run time")
        key = (name, mode)
        if key in self._busy:
            return None  # a binding that refers to itself adds nothing new
        self._busy.add(key)
        try:
            judge = self.path if mode == "path" else self.code
            return worst(judge(v) for v in values if v is not None)
        finally:
            self._busy.discard(key)

    def path(self, node: ast.expr) -> Origin | None:
        """Where a file ``node`` names lies (None: nothing to judge, e.g. ``sys.path``)."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return constant_path(node.value)
            if isinstance(node.value, bytes):
                return constant_path(node.value.decode(errors="replace"))
            return LITERAL
        if isinstance(node, ast.Name):
            return self._name(node.id, "path")
        dotted = self.canonical(node)
        if dotted == "sys.path":
            return None
        if isinstance(node, ast.Attribute):
            if node.attr == "parent":
                return _down(self.path(node.value), -1)
            return RUNTIME
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
                index = node.slice
                up = index.value + 1 if (isinstance(index, ast.Constant)
                                         and isinstance(index.value, int)) else 99
                return _down(self.path(node.value.value), -up)
            return RUNTIME
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Add):
            right = node.right
            if (isinstance(node.op, ast.Div) and isinstance(right, ast.Constant)
                    and isinstance(right.value, str) and right.value.startswith("/")):
                return constant_path(right.value)
            return _down(self.path(node.left), _segments(right))
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node)
        if isinstance(node, ast.IfExp):
            return worst((self.path(node.body), self.path(node.orelse)))
        if isinstance(node, ast.BoolOp):
            return worst(self.path(v) for v in node.values)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return worst(self.path(e) for e in node.elts)
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            return worst(self.path(g.iter) for g in node.generators)
        if isinstance(node, ast.Starred):
            return self.path(node.value)
        if isinstance(node, ast.Call):
            return self._path_call(node)
        return RUNTIME

    def _fstring(self, node: ast.JoinedStr) -> Origin | None:
        head = node.values[0] if node.values else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            text = head.value
            if not text.startswith("/"):
                return Origin("agent", why=f"the relative path f{text!r}...")
            formatted = sum(isinstance(v, ast.FormattedValue) for v in node.values)
            return _down(constant_path(text.rsplit("/", 1)[0] or "/"), formatted)
        if isinstance(head, ast.FormattedValue):
            return _down(self.path(head.value), 1 if len(node.values) > 1 else 0)
        return RUNTIME

    def _path_call(self, node: ast.Call) -> Origin | None:
        name = self.canonical(node.func)
        short = node.func.attr if isinstance(node.func, ast.Attribute) else name.rsplit(".", 1)[-1]
        first = node.args[0] if node.args else None
        if name in _PASS_FIRST or (name.startswith("pathlib.") and short in _PASS_FIRST):
            return self.path(first) if first is not None else \
                Origin("agent", why="the working directory")
        if name in ("os.path.join", "posixpath.join"):
            absolute = [a for a in node.args if isinstance(a, ast.Constant)
                        and isinstance(a.value, str) and a.value.startswith("/")]
            start = absolute[-1] if absolute else first
            if start is None:
                return RUNTIME
            rest = node.args[node.args.index(start) + 1:]
            return _down(self.path(start), sum(_segments(a) for a in rest))
        if name in ("os.path.dirname", "posixpath.dirname") and first is not None:
            return _down(self.path(first), -1)
        if name == "ctypes.util.find_library":
            return CLOSURE
        if isinstance(node.func, ast.Attribute) and not self._module(node.func.value):
            if short in _SAME_OBJECT:
                return self.path(node.func.value)
            if short in _CHILDREN:
                return _down(self.path(node.func.value), 1)
            if short == "joinpath":
                return _down(self.path(node.func.value), sum(_segments(a) for a in node.args))
        return RUNTIME

    def _module(self, node: ast.expr) -> bool:
        """Whether ``node`` names an imported module (``os.path``), not a value."""
        head = self.canonical(node).split(".", 1)[0]
        return head in ("os", "posixpath", "pathlib", "io", "codecs", "builtins", "ctypes",
                        "tempfile", "importlib", "sys")

    def code(self, node: ast.expr) -> Origin | None:
        """Where text that ``node`` evaluates to (code or data) comes from."""
        if isinstance(node, ast.Constant):
            return LITERAL
        if isinstance(node, ast.Name):
            return self._name(node.id, "code")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
            return worst((self.code(node.left), self.code(node.right)))
        if isinstance(node, ast.JoinedStr):
            return worst(self.code(v.value) for v in node.values
                         if isinstance(v, ast.FormattedValue))
        if isinstance(node, ast.IfExp):
            return worst((self.code(node.body), self.code(node.orelse)))
        if not isinstance(node, ast.Call):
            return RUNTIME
        name = self.canonical(node.func)
        if name in ("open", "io.open", "codecs.open", "builtins.open"):
            return self.path(node.args[0]) if node.args else RUNTIME
        if isinstance(node.func, ast.Attribute) and not self._module(node.func.value):
            method, target = node.func.attr, node.func.value
            if method in _READS:
                return self.path(target)
            if method in _TEXT_METHODS:
                return worst([self.code(target), *(self.code(a) for a in node.args)])
        if name in _TEXT_CALLS and node.args:
            return self.code(node.args[0])
        return RUNTIME


def _parameters(args: ast.arguments) -> list[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return [a.arg for a in every]


def _bindings(tree: ast.Module) -> list[tuple[str, ast.expr | None]]:
    """``(name, value)`` for every binding of a name; value None where it is set at run time
    from outside the file's text (a parameter, an import, an unpacking, ``except ... as``)."""
    found: list[tuple[str, ast.expr | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.append((target.id, node.value))
                else:
                    found += [(n.id, None) for n in ast.walk(target)
                              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and isinstance(node.target, ast.Name):
            found.append((node.target.id, node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            found.append((node.target.id,
                          ast.BinOp(left=ast.Name(node.target.id, ast.Load()), op=node.op,
                                    right=node.value)))
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            if isinstance(node.target, ast.Name):
                found.append((node.target.id, _element(node.iter)))
            else:
                found += [(n.id, None) for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.With | ast.AsyncWith):
            found += [(item.optional_vars.id, item.context_expr) for item in node.items
                      if isinstance(item.optional_vars, ast.Name)]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            found += [(name, None) for name in _parameters(node.args)]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found += [((a.asname or a.name).split(".")[0], None) for a in node.names]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.append((node.name, None))
    return found


def _element(iterable: ast.expr) -> ast.expr:
    """What a loop over ``iterable`` binds: its elements when it is a literal collection."""
    if isinstance(iterable, ast.List | ast.Tuple | ast.Set) and iterable.elts:
        return ast.List(elts=list(iterable.elts), ctx=ast.Load())
    return iterable
