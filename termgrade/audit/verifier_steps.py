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

test.sh is read by a real shell parser (:mod:`termgrade.audit.shellparse`): pytest as an
``if`` condition, flags in a variable, under ``bash -c``, in a function or ``$(...)`` is
found, and so is an agent program reached the same ways.
"""

from __future__ import annotations

import posixpath
import re

from termgrade.audit.agent_code import is_agent_path
from termgrade.audit.shellparse import ShellCommand, shell_commands

_PYTEST = re.compile(r"^py\.?test$")
_PYTHON = re.compile(r"^python[\d.]*$")
_RUNNERS = re.compile(r"^(python[\d.]*|bash|sh|dash|zsh|node|perl|ruby|make)$")
_LAUNCHERS = {"uv": "run", "uvx": "", "poetry": "run", "pipenv": "run", "pdm": "run",
              "hatch": "run", "conda": "run", "mamba": "run", "micromamba": "run",
              "pixi": "run"}
"""Programs that run another one (``uv run X``, ``uvx X``): pytest is looked for in X."""
_PYTHON_VALUED = {"-W", "-X", "-Q"}
"""Python's options that take a value (``-W ignore``)."""


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


def verifier_steps_reason(test_script: str) -> str | None:
    """The ``verifier_attested`` check's reason, or None when test.sh is fully attested."""
    commands = shell_commands(test_script)
    if not any(c.called and _runs_pytest(c.words) for c in commands):
        return ("test.sh runs no pytest: no attested session covers its decision, so the task "
                "is unattested (graded by test.sh's own reward, left out of labels, select and "
                "training by default); run the checks as pytest tests to make it attestable")
    direct = [found for command in commands if (found := _agent_program(command))]
    if direct:
        return (f"test.sh runs the agent's program outside pytest ({direct[0]}): such a step "
                "is not attested and could ask for a session key, so the task is unattested; "
                "run it inside a test (subprocess.run) instead")
    return None
