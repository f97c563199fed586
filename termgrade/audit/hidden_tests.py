"""Hidden tests that agent code can read: the ``hidden_tests_exposed`` check (informational).

No mechanism stops a program a test runs from reading ``/tests``: the agent's program, run
by a test as a child of pytest (or by ``test.sh``), shares the scoring container with the
hidden tests and can open the expected outputs shipped beside them, or the test file
itself, and print the answer. An RL policy can learn that. This check counts the tasks
where it is possible and worth something, statically:

* the tests run an agent program: a ``subprocess`` / ``os.system`` / ``pexpect`` call in a
  Python file under ``tests/`` (or a step of ``test.sh``) whose program is a path outside
  ``/tests`` and the image's tool folders (``/app/solve``, ``/tmp/a.out``), a relative one
  (``./build/tool``: a tool the agent builds), or a script of the agent's given to an
  interpreter (``python3 /app/main.py``, ``bash run.sh``); a program computed at run time
  counts too;
* the task ships data under ``tests/``: any file there but Python files and ``test.sh``
  (expected outputs, fixtures, inputs). The tests' own source, with its inline expected
  values, is exposed to such a program too: :func:`agent_programs` alone counts that.

It never makes a task unattested and never fails the audit (:data:`INFORMATIONAL` in
:mod:`.static_checks`): it says where the hidden tests are exposed.
"""

from __future__ import annotations

import ast
import posixpath
import shlex
from collections.abc import Iterator
from pathlib import Path

from termgrade.audit.agent_code import is_agent_path
from termgrade.audit.documents import AuditDoc, SourceFile
from termgrade.audit.pyorigin import Origins
from termgrade.audit.shellparse import shell_commands
from termgrade.core.pyparse import parse

RUNNERS = {"subprocess.run", "subprocess.call", "subprocess.check_call",
           "subprocess.check_output", "subprocess.Popen", "subprocess.getoutput",
           "subprocess.getstatusoutput", "os.system", "os.popen", "os.execv", "os.execvp",
           "os.execl", "os.execlp", "os.spawnv", "os.spawnl", "pexpect.spawn", "pexpect.run",
           "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"}
"""Calls that start a program, by their dotted name (the file's imports resolved)."""
SHELL_STRINGS = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                 "asyncio.create_subprocess_shell", "pexpect.run", "pexpect.spawn"}
"""Calls whose string argument a shell reads."""
INTERPRETERS = {"python", "python3", "bash", "sh", "dash", "zsh", "node", "nodejs", "perl",
                "ruby", "php", "lua", "Rscript", "java", "deno", "bun", "tclsh"}
"""Programs that run the file they are given."""
MODULES_OF_THE_IMAGE = {"pytest", "pip", "unittest", "venv", "json.tool", "http.server",
                        "compileall", "py_compile", "doctest", "timeit", "site"}
"""``python -m X`` modules that are the image's whatever the working directory."""
VALUED = {"-W", "-X", "--require", "-r"}
"""Interpreter options followed by a value (``python -W ignore``, ``node -r mod``)."""
NOT_DATA = {"test.sh", "conftest.py", "__init__.py"}
MAX_SHOWN = 3


def _interpreter(word: str) -> bool:
    base = word.rsplit("/", 1)[-1]
    return base in INTERPRETERS or base.rstrip("0123456789.") in INTERPRETERS


def _agent_file(word: str, cwd: str | None) -> bool:
    """Whether ``word``, a program or script, is the agent's: a path outside ``/tests`` where
    the agent writes, or a relative one read against an agent folder or an unknown one (the
    working directory test.sh left, the agent's WORKDIR before any ``cd``)."""
    if not word.startswith("/"):
        if cwd is None:
            return True
        word = posixpath.join(cwd, word)
    path = posixpath.normpath(word)
    return not (path == "/tests" or path.startswith("/tests/")) and is_agent_path(path)


def agent_program(words: list[str | None], cwd: str | None) -> str | None:
    """What of ``words`` (a command line; None: a word computed at run time) is an agent
    program, shown in a few words; None when it runs the image's tools only."""
    if not words or words[0] is None:
        return "a program computed at run time"
    head = words[0]
    shown = " ".join(w or "?" for w in words[:3])
    if head.rsplit("/", 1)[-1] in ("make", "gmake"):
        args = words[1:]
        where = next((args[i + 1] for i, w in enumerate(args[:-1]) if w == "-C"), ".")
        return shown if where is None or _agent_file(where, cwd) else None
    if not _interpreter(head):
        return shown if "/" in head and _agent_file(head, cwd) else None
    args = words[1:]
    skip = False
    for index, word in enumerate(args):
        if skip:
            skip = False
            continue
        if word is None:
            return shown
        if word in VALUED:
            skip = True
            continue
        if word in ("-c", "-e", "--eval"):
            code = args[index + 1] if index + 1 < len(args) else None
            return shown if code is None or any(
                is_agent_path(part) for part in code.replace("'", " ").replace('"', " ").split()
            ) else None
        if word == "-m":
            module = args[index + 1] if index + 1 < len(args) else None
            agent_dir = cwd is not None and is_agent_path(cwd)
            return shown if agent_dir and module not in MODULES_OF_THE_IMAGE else None
        if word in ("-jar", "-cp", "-classpath", "-f"):
            target = args[index + 1] if index + 1 < len(args) else None
            return shown if target is None or _agent_file(target, cwd) else None
        if word.startswith("-"):
            continue
        return shown if _agent_file(word, cwd) else None
    return None


def _shell_programs(script: str) -> Iterator[str]:
    for command in shell_commands(script):
        found = agent_program(list(command.words), command.cwd)
        if found:
            yield found


class _Fold:
    """Constant folding of the strings a test file builds (None where unknown)."""

    def __init__(self, origins: Origins, canonical: dict[str, str]) -> None:
        self.origins = origins
        self.aliases = canonical
        self._busy: set[str] = set()

    def dotted(self, node: ast.expr) -> str:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return ""
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def text(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            values = self.origins.bindings.get(node.id) or []
            if len(values) != 1 or values[0] is None or node.id in self._busy:
                return None
            self._busy.add(node.id)
            try:
                return self.text(values[0])
            finally:
                self._busy.discard(node.id)
        if self.dotted(node) == "sys.executable":
            return "python3"
        if isinstance(node, ast.JoinedStr):
            parts = [self.text(v.value) if isinstance(v, ast.FormattedValue) else self.text(v)
                     for v in node.values if isinstance(v, ast.Constant | ast.FormattedValue)]
            return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Div):
            left, right = self.text(node.left), self.text(node.right)
            if left is None or right is None:
                return None
            return posixpath.join(left, right) if isinstance(node.op, ast.Div) else left + right
        if isinstance(node, ast.Call):
            name = self.dotted(node.func).rsplit(".", 1)[-1]
            if name in ("str", "Path", "PurePath", "fspath", "abspath", "which") and node.args:
                return self.text(node.args[0])
            if name == "join" and self.dotted(node.func).endswith("path.join"):
                parts = [self.text(a) for a in node.args]
                return None if any(p is None for p in parts) else posixpath.join(
                    *(p or "" for p in parts))
        return None

    def words(self, node: ast.expr) -> list[str | None] | None:
        """A command line given as a list (None: not a list)."""
        if isinstance(node, ast.Name):
            values = self.origins.bindings.get(node.id) or []
            if len(values) == 1 and isinstance(values[0], ast.List | ast.Tuple):
                return self.words(values[0])
            return None
        if not isinstance(node, ast.List | ast.Tuple):
            return None
        found: list[str | None] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                found.append(None)
            else:
                found.append(self.text(element))
        return found


def _aliases(tree: ast.Module) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    return found


Command = list[str | None] | str | None
"""A command line: its words (a list), one string (a program, or a shell's text), or None
(computed at run time)."""
_Def = ast.FunctionDef | ast.AsyncFunctionDef


class _Commands:
    """The command lines a runner call may start, following a helper's parameters to the
    helper's call sites in the same file (``def sh(*args): subprocess.run(list(args))``)."""

    def __init__(self, tree: ast.Module, fold: _Fold) -> None:
        self.fold = fold
        self.enclosing: dict[int, _Def] = {}
        self.calls: dict[str, list[ast.Call]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):  # inner functions come later and win
                    if inner is not node:
                        self.enclosing[id(inner)] = node
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self.calls.setdefault(node.func.id, []).append(node)

    def of(self, node: ast.expr, within: ast.AST, depth: int = 0) -> list[Command]:
        func = self.enclosing.get(id(within))
        if isinstance(node, ast.Call) and self.fold.dotted(node.func) in ("list", "tuple") \
                and len(node.args) == 1:
            node = node.args[0]
        words = self.fold.words(node)
        if words is not None:
            if func is not None and isinstance(node, ast.List | ast.Tuple) and any(
                    isinstance(e, ast.Starred) for e in node.elts) and depth < 2:
                return self._spread(node, func, depth)
            return [words]
        text = self.fold.text(node)
        if text is not None:
            return [text]
        if isinstance(node, ast.Name) and func is not None and depth < 2:
            return self._parameter(node.id, func, depth)
        return [None]

    def _spread(self, node: ast.List | ast.Tuple, func: _Def, depth: int) -> list[Command]:
        """A list with ``*args`` of the helper: each call site's arguments spliced in."""
        vararg = func.args.vararg.arg if func.args.vararg else None
        fixed = len(func.args.posonlyargs) + len(func.args.args)
        sites = self.calls.get(func.name, [])
        if not sites:
            return [self.fold.words(node)]
        found: list[Command] = []
        for site in sites:
            words: list[str | None] = []
            for element in node.elts:
                inner = element.value if isinstance(element, ast.Starred) else None
                if isinstance(inner, ast.Name) and inner.id == vararg:
                    words += [self.fold.text(a) for a in site.args[fixed:]]
                elif inner is not None:
                    words.append(None)
                else:
                    words.append(self.fold.text(element))
            found.append(words)
        return found

    def _parameter(self, name: str, func: _Def, depth: int) -> list[Command]:
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        vararg = func.args.vararg.arg if func.args.vararg else None
        sites = self.calls.get(func.name, [])
        if not sites or (name not in params and name != vararg):
            return [None]
        found: list[Command] = []
        for site in sites:
            if name == vararg:
                found.append([self.fold.text(a) for a in site.args[len(params):]])
                continue
            index = params.index(name)
            given = site.args[index] if index < len(site.args) else next(
                (kw.value for kw in site.keywords if kw.arg == name), None)
            found += self.of(given, site, depth + 1) if given is not None else [None]
        return found


def _judge(command: Command, cwd: str | None, by_shell: bool) -> str | None:
    if command is None:
        return "a program computed at run time"
    if isinstance(command, list):
        return agent_program(command, cwd)
    if by_shell:
        prefix = f"cd {shlex.quote(cwd)}\n" if cwd else ""
        return next(_shell_programs(prefix + command), None)
    return agent_program([command], cwd)


def python_programs(source: SourceFile) -> list[str]:
    """``path:line: program`` for each call in ``source`` that starts an agent program."""
    try:
        tree = parse(source.text, source.path)
    except (SyntaxError, ValueError):
        return []
    fold = _Fold(Origins(tree, source.path, lambda n: ""), _aliases(tree))
    commands = _Commands(tree, fold)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = fold.dotted(node.func)
        if name not in RUNNERS:
            continue
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        cwd_node = keywords.get("cwd")
        cwd = fold.text(cwd_node) if cwd_node is not None else None
        shell = keywords.get("shell")
        by_shell = name in SHELL_STRINGS or (isinstance(shell, ast.Constant)
                                             and bool(shell.value))
        if name.startswith("os.exec") or name == "asyncio.create_subprocess_exec":
            lines: list[Command] = [[fold.text(a) for a in node.args]]
        else:
            lines = commands.of(node.args[0], node)
        what = next((w for line in lines if (w := _judge(line, cwd, by_shell))), None)
        if what:
            found.append(f"{source.path}:{node.lineno}: {what}")
    return found


def expected_data(root: Path) -> list[str]:
    """Files under ``root/tests`` other than Python files (the tests and their helpers: the
    tests' own assertions are exposed to any agent program as well), test.sh and caches."""
    tests = root / "tests"
    if not tests.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in tests.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.name not in NOT_DATA
                  and p.suffix != ".py")


def agent_programs(doc: AuditDoc) -> list[str]:
    """Where the tests (or test.sh) run an agent program."""
    found = [f"tests/test.sh: {w}" for w in _shell_programs(doc.test_script or "")]
    for source in doc.test_sources:
        found += python_programs(source)
    return found


def hidden_tests_reason(doc: AuditDoc) -> str | None:
    """The ``hidden_tests_exposed`` check's reason, or None."""
    data = expected_data(doc.root)
    if not data:
        return None
    runs = agent_programs(doc)
    if not runs:
        return None
    shown_runs = "; ".join(runs[:MAX_SHOWN]) + (f" (+{len(runs) - MAX_SHOWN} more)"
                                                if len(runs) > MAX_SHOWN else "")
    shown_data = ", ".join(data[:MAX_SHOWN]) + (f" (+{len(data) - MAX_SHOWN} more)"
                                                if len(data) > MAX_SHOWN else "")
    return (f"the tests run an agent program ({shown_runs}) while /tests holds {shown_data}: "
            "nothing stops that program from reading them and printing the expected answer "
            "(informational: the task stays attestable); keep expected values out of files "
            "under tests/ (compute them in the test) where it matters")
