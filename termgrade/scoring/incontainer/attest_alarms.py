"""What the plugin's audit hook watches, and the judgements of what it sees that need
nothing of the session: the library frames that load or generate code, the pickled callables
that are safe, a spawn of the tests' own helper, the closure's own prefixes, the tests' code
compared line by line.

Part of TermGrade's attestation plugin (:mod:`termgrade_attest`), staged into it as one file
(``attestation._source``): it reads no state of the plugin's (the judgements that need the
session's trusted roots, :func:`termgrade_attest._generated` and the like, stay there). Kept
free of TermGrade imports and of syntax newer than Python 3.8.
"""

from __future__ import annotations

import os
import sys
from typing import Any

LOADER_FRAMES = ("<frozen importlib._bootstrap_external>", "<frozen importlib._bootstrap>",
                 "<frozen zipimport>", "<frozen runpy>")
CODE_GENERATORS = ("/dataclasses.py", "/collections/__init__.py", "/typing.py", "/enum.py",
                   "/functools.py", "/string.py", "/_pytest/", "/attr/", "/pydantic/",
                   "/numpy/", "/pandas/", "/pluggy/")
"""Library code that compiles and runs generated source (dataclasses, namedtuple, ...).
Not ``doctest`` or ``timeit``: they run the text they are given (see :func:`_generated`)."""
TIMEIT_CALLS = ("pass", "_stmt()", "_setup()")
"""What ``timeit.Timer`` compiles for callables (and its default ``pass``): nothing else."""
SAFE_PICKLE_MODULES = ("collections", "datetime", "decimal", "fractions", "uuid", "array",
                       "numpy", "numpy.core.multiarray", "numpy._core.multiarray",
                       "numpy.core.numeric", "numpy._core.numeric", "pathlib", "re",
                       "ipaddress", "zoneinfo", "enum")
UNSAFE_BUILTINS = ("eval", "exec", "compile", "open", "getattr", "setattr", "delattr",
                   "__import__", "globals", "locals", "vars", "input", "breakpoint",
                   "memoryview", "help", "exit", "quit")
SPAWNS = ("subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.fork",
          "os.forkpty")
WATCHED = ("open", "exec", "ctypes.dlopen", "pickle.find_class", *SPAWNS)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
NOT_FILES = ("/proc/", "/sys/", "/dev/")


def _normal_lines(text: str) -> str:
    """``text`` with blank lines dropped and each line stripped: code compared by its
    lines, whatever its indentation."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _pickle_safe(module: str, name: str) -> bool:
    """May a pickle name ``module.name``? Builtins but the unsafe ones, copyreg's
    reconstructors, a few data modules, and classes the tests themselves define."""
    if module == "builtins":
        return name not in UNSAFE_BUILTINS
    if module == "copyreg" and name in ("_reconstructor", "__newobj__", "__newobj_ex__"):
        return True
    if module in SAFE_PICKLE_MODULES or module.split(".")[0] in ("pandas",):
        return True
    loaded = sys.modules.get(module)
    where = getattr(loaded, "__file__", None) or ""
    return where.startswith("/tests/")  # a class the tests themselves define


def _strings(value: object) -> list[str]:
    """The strings and paths in ``value`` (a spawn's arguments), nested lists flattened."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _strings(item)]
    return []


def _runs_tests_helper(args: tuple[Any, ...]) -> bool:
    """Does this spawn run a program of the tests (a path under /tests)?"""
    texts = _strings(args)
    if any("/tests/" in text for text in texts):
        return True
    cwd = os.path.realpath(os.getcwd())
    return (cwd == "/tests" or cwd.startswith("/tests/")) and any(
        not text.startswith("-") and "/" not in text and os.path.isfile(text)
        for text in texts)


def _below_any(path: str, roots: frozenset[str]) -> bool:
    """Is ``path`` one of ``roots`` or below one (``/`` itself never counts)?"""
    here = path
    while here not in ("", "/"):
        if here in roots:
            return True
        here = here.rpartition("/")[0]
    return False


def _own_prefixes() -> tuple[str, ...]:
    """Where the verifier's closure keeps this interpreter's packages (the rule of
    ``termgrade.scoring.review.closure``): its own prefixes and ``/usr``; a path a ``.pth`` or
    the working directory put on ``sys.path`` is the agent's."""
    return tuple(dict.fromkeys(os.path.realpath(p).rstrip("/") for p in (
        sys.prefix, sys.base_prefix, "/usr") if p))
