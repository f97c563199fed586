"""What of ``test.sh`` the grader cannot attest, statically.

TermGrade computes the reward from the pytest sessions ``test.sh`` starts (each signed
inside the scoring container); ``test.sh``'s own number can only lower it. Two shapes of
``test.sh`` are therefore worth a word before any model is graded:

* no pytest at all: no attested session covers the decision, so the task is
  unattested (:mod:`termgrade.audit.attestable`): graded by test.sh's own reward, and
  left out of labels, selection and training by default;
* a step that runs the agent's program itself, outside pytest (``python3 /app/x.py``,
  ``bash /app/run.sh``, ``/app/build.sh``, ``make -C /app``): that program is a child of
  ``test.sh``, so the grader's broker cannot tell it from a pytest that ``test.sh``
  started, and it could ask for a session key and sign a session of its own. Run it from
  a test instead (a subprocess inside a test is reaped when the test ends). Such a task
  is unattested too. A relative path is read against the directory ``cd`` last chose;
  before any ``cd`` it is the image's WORKDIR, the agent's, so ``python3 gen.py`` there
  counts as the agent's program.

* a pytest run with the grader's environment removed (``env -i``, ``env -``, ``env -u
  PYTHONPATH``, ``unset PYTEST_PLUGINS``) or started through ``sudo``, ``su`` or
  ``runuser``: that pytest loads neither the grader's ``sitecustomize`` nor its plugin (or
  the broker keys no session under such a parent), so no attested session covers it,
  and without ``PYTHONDONTWRITEBYTECODE`` it writes bytecode into ``/tests``. The task is
  unattested (the shell parser's ``env_reset``: :mod:`termgrade.audit.shellparse`).

test.sh is read by a real shell parser (:mod:`termgrade.audit.shellparse`): pytest as an
``if`` condition, flags in a variable, under ``bash -c``, in a function or ``$(...)`` is
found, and so is an agent program reached the same ways.

A runner script of the tests directory (given as ``tests``: name relative to it -> text)
that test.sh runs is followed into its own commands, recursively (no cycles, at most
:data:`MAX_FOLLOW` deep): ``bash|sh|dash X``, ``source X``, ``. X``, ``exec X`` or ``X``
by its path, where X is ``/tests/...`` or a relative name read against the ``cd`` in
effect (the runner starts in that directory). Its pytest counts, and so does an agent
program it runs (named with the runner). A Python file of the tests directory run as
``python X.py`` (or by its path) counts as running pytest when its code (read with
:mod:`ast`) calls ``pytest.main`` (``import pytest``; ``from pytest import main``) or
runs pytest through ``subprocess`` (an argument list literal such as
``[sys.executable, "-m", "pytest", ...]``, or a ``shell=True`` / ``os.system`` string).
A runner's ``cd`` and variables do not flow back into test.sh after a ``source``.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import posixpath
import re
import shlex
from collections.abc import Mapping

from termgrade.audit.agent_code import is_agent_path
from termgrade.audit.shellparse import ShellCommand, shell_commands
from termgrade.core.pyparse import parse

_PYTEST = re.compile(r"^py\.?test$")
_PYTHON = re.compile(r"^python[\d.]*$")
_RUNNERS = re.compile(r"^(python[\d.]*|bash|sh|dash|zsh|node|perl|ruby|make)$")
_LAUNCHERS = {"uv": "run", "uvx": "", "poetry": "run", "pipenv": "run", "pdm": "run",
              "hatch": "run", "conda": "run", "mamba": "run", "micromamba": "run",
              "pixi": "run"}
"""Programs that run another one (``uv run X``, ``uvx X``): pytest is looked for in X."""
_PYTHON_VALUED = {"-W", "-X", "-Q"}
"""Python's options that take a value (``-W ignore``)."""
_SHELL_VALUED = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}
"""A shell's options that take a value (``bash -o pipefail X``)."""
_SCRIPT_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh"})
_SOURCES = frozenset({"source", "."})
_SUBPROCESS = frozenset({"run", "call", "check_call", "check_output", "Popen", "system"})
"""Calls (the last part of their name) whose command is read for pytest in a Python runner."""
TESTS_DIR = "/tests"
MAX_FOLLOW = 8
"""How deep runner scripts that run runner scripts are followed."""
MAX_SCRIPTS = 64
"""How many runner scripts one test.sh's reading follows in all."""


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _python_module(args: list[str]) -> str | None:
    """The module of ``python [options] -m MODULE``, or None."""
    index = 0
    while index < len(args):
        word = args[index]
        if word == "-m":
            return args[index + 1] if index + 1 < len(args) else None
        if word.startswith("-m"):
            return word[2:]
        if not word.startswith("-"):
            return None
        index += 2 if word in _PYTHON_VALUED else 1
    return None


def _runs_pytest(words: list[str]) -> bool:
    head = _base(words[0])
    if _PYTEST.match(head):
        return True
    if _PYTHON.match(head):
        return _python_module(words[1:]) == "pytest"
    sub = _LAUNCHERS.get(head)
    if sub is None or (sub and sub not in words[1:3]):
        return False
    rest = words[1:]
    return any(_PYTEST.match(_base(w)) or (_PYTHON.match(_base(w))
               and _python_module(rest[i + 1:]) == "pytest") for i, w in enumerate(rest))


def _path(word: str, cwd: str | None) -> str | None:
    """``word`` as an absolute path; None when relative to an unknown directory."""
    if word.startswith("/"):
        return posixpath.normpath(word)
    return posixpath.normpath(posixpath.join(cwd, word)) if cwd else None


def _agent(word: str, cwd: str | None) -> bool:
    """Whether ``word`` names a file of the agent's (relative: in the agent's WORKDIR)."""
    path = _path(word, cwd)
    return path is None or is_agent_path(path)


def _agent_program(command: ShellCommand) -> str | None:
    words, cwd = command.words, command.cwd
    shown = " ".join(words[:3]) + ("" if cwd is None else f" (in {cwd})")
    head = words[0]
    if "/" in head and _agent(head, cwd):
        return shown
    name = _base(head)
    if not _RUNNERS.match(name):
        return None
    args = words[1:]
    if name == "make":
        directory = next((args[i + 1] for i, w in enumerate(args[:-1]) if w == "-C"), ".")
        if _agent(directory, cwd) or any(is_agent_path(w) for w in args):
            return shown
        return None
    if (_PYTHON.match(name) and _python_module(args) is not None) or any(
            w in ("-c", "-e") for w in args):
        return None                                 # a module or inline code, not a file
    target = next((w for w in args if not w.startswith("-")), "")
    return shown if target and _agent(target, cwd) else None


@dataclasses.dataclass(frozen=True)
class _Step:
    """A command test.sh runs, with the runner scripts (``/tests/...``) it was reached by."""

    command: ShellCommand
    via: tuple[str, ...] = ()
    runs_pytest: bool = False


def _tests_name(word: str, cwd: str | None, tests: Mapping[str, str]) -> str | None:
    """The tests directory's file ``word`` names (its name there), or None."""
    if "$" in word:
        return None
    path = _path(word, cwd)
    prefix = TESTS_DIR + "/"
    if path is None or not path.startswith(prefix):
        return None
    name = path[len(prefix):]
    return name if name in tests else None


def _script_word(words: list[str]) -> str | None:
    """The script file a command runs: ``bash [options] X``, ``source X``, ``. X``, ``X``."""
    head, args = words[0], words[1:]
    name = _base(head)
    if head in _SOURCES:
        return args[0] if args else None
    if _PYTHON.match(name):
        if _python_module(args) is not None or any(w in ("-c", "-") for w in args):
            return None
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in _PYTHON_VALUED else 1
        return args[index] if index < len(args) else None
    if name in _SCRIPT_SHELLS:
        index = 0
        while index < len(args) and args[index][:1] in ("-", "+"):
            if args[index] == "--":
                index += 1
                break
            index += 2 if args[index] in _SHELL_VALUED else 1
        return args[index] if index < len(args) else None
    return head if "/" in head else None


def _literal_argv(node: ast.expr) -> list[str | None] | None:
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    return [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None
            for e in node.elts]


def _argv_runs_pytest(argv: list[str | None]) -> bool:
    if any(a == "-m" and b == "pytest" for a, b in itertools.pairwise(argv)):
        return True
    return bool(argv) and argv[0] is not None and _runs_pytest([w or "" for w in argv])


def _command_runs_pytest(call: ast.Call) -> bool:
    """Whether a ``subprocess``-like call's command (list literal or shell text) is pytest."""
    command = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg in ("args", "command")), None)
    if command is None:
        return False
    argv = _literal_argv(command)
    if argv is not None:
        return _argv_runs_pytest(argv)
    if isinstance(command, ast.Constant) and isinstance(command.value, str):
        return any(c.called and _runs_pytest(c.words) for c in shell_commands(command.value))
    return False


def python_runs_pytest(code: str) -> bool:
    """Whether a Python runner's code runs pytest: a call of ``pytest.main`` (after ``import
    pytest [as x]``) or of ``main`` from ``from pytest import main [as y]``, or a subprocess
    call whose command is pytest. A mention in a string or comment is not a call."""
    try:
        tree = parse(code, "<runner>")
    except (SyntaxError, ValueError):
        return False
    modules: set[str] = set()
    mains: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name == "pytest")
        elif isinstance(node, ast.ImportFrom) and node.module == "pytest" and not node.level:
            mains.update(a.asname or a.name for a in node.names if a.name == "main")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr == "main" and isinstance(func.value, ast.Name) and (
                    func.value.id in modules):
                return True
            if func.attr in _SUBPROCESS and _command_runs_pytest(node):
                return True
        elif isinstance(func, ast.Name) and (func.id in mains or (
                func.id in _SUBPROCESS and _command_runs_pytest(node))):
            return True
    return False


def _is_python(name: str, text: str) -> bool:
    first = text.split("\n", 1)[0]
    return name.endswith(".py") or (first.startswith("#!") and "python" in first)


class _Reader:
    """test.sh's commands, with those of the runner scripts it runs (module doc)."""

    def __init__(self, tests: Mapping[str, str]) -> None:
        self.tests = tests
        self.budget = MAX_SCRIPTS

    def steps(self, script: str, cwd: str | None = None, via: tuple[str, ...] = (),
              called: bool = True, reset: str | None = None) -> list[_Step]:
        text = script if cwd is None else f"cd {shlex.quote(cwd)}\n{script}"
        found: list[_Step] = []
        for command in shell_commands(text):
            if not called:
                command = dataclasses.replace(command, called=False)
            if reset is not None and command.env_reset is None:
                command = dataclasses.replace(command, env_reset=reset)
            name = self._runner(command)
            if name is None:
                found.append(_Step(command, via))
                continue
            shown = f"{TESTS_DIR}/{name}"
            if _is_python(name, self.tests[name]):
                found.append(_Step(command, via, python_runs_pytest(self.tests[name])))
                continue
            found.append(_Step(command, via))
            if shown in via or len(via) >= MAX_FOLLOW or self.budget <= 0:
                continue
            self.budget -= 1
            found.extend(self.steps(self.tests[name], command.cwd, (*via, shown),
                                    command.called, command.env_reset))
        return found

    def _runner(self, command: ShellCommand) -> str | None:
        word = _script_word(command.words)
        return None if word is None else _tests_name(word, command.cwd, self.tests)


def verifier_steps_reason(test_script: str,
                          tests: Mapping[str, str] | None = None) -> str | None:
    """The ``verifier_attested`` check's reason, or None when test.sh is fully attested.

    ``tests`` holds the tests directory's files (name relative to it -> text): runner
    scripts test.sh runs from there are followed (module doc)."""
    steps = _Reader(tests or {}).steps(test_script)
    if not any(s.command.called and (s.runs_pytest or _runs_pytest(s.command.words))
               for s in steps):
        return ("test.sh runs no pytest: no attested session covers its decision, so the task "
                "is unattested (graded by test.sh's own reward, left out of labels, select and "
                "training by default); run the checks as pytest tests to make it attestable")
    reset = next((s for s in steps if s.command.called and s.command.env_reset and (
        s.runs_pytest or _runs_pytest(s.command.words))), None)
    if reset is not None:
        via = f", run by {' -> '.join(reset.via)}" if reset.via else ""
        return (f"test.sh runs pytest under `{reset.command.env_reset}`{via}, which removes "
                "the grader's environment (its PYTHONPATH, PYTEST_PLUGINS, "
                "PYTHONDONTWRITEBYTECODE) or starts pytest where the grader's broker keys no "
                "session: no attested session covers its decision, so the task is unattested "
                "(graded by test.sh's own reward); run pytest in test.sh's own environment "
                "(set variables with `env VAR=value`, not `env -i`) to make it attestable")
    direct = [found + (f", run by {' -> '.join(step.via)}" if step.via else "")
              for step in steps if (found := _agent_program(step.command))]
    if direct:
        return (f"test.sh runs the agent's program outside pytest ({direct[0]}): such a step "
                "is not attested and could ask for a session key, so the task is unattested; "
                "run it inside a test (subprocess.run) instead")
    return None
