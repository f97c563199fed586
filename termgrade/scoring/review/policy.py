"""What of the agent's changes reach the scoring container, and what is a finding.

The one statement of the trust boundary in code (``docs/grading.md`` says it in words).
The agent may change anything in its container except the **verifier's closure** (what
the verifier runs: see :mod:`termgrade.scoring.review.closure`) and the grader's own paths.
Every other change is its work and is carried, wherever the task put its deliverable
(``/app``, ``/opt``, ``/etc``, ``/var``, ``/usr/local``, ``/solution``). A change to the
closure, to the grader's paths, or an entry that would shadow what the verifier runs (a
``python3`` or ``bash`` earlier on its PATH, a replaced shared library) is a finding:
the trial scores 0. In the scoring container the closure is mounted read-only, so no
process there can change it either.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from fnmatch import fnmatch
from functools import cached_property

from termgrade.scoring.review.closure import PYTHON_NAME, VERIFIER_PATH, VERIFIER_TOOLS
from termgrade.scoring.review.pathset import PathSet
from termgrade.scoring.review.python_startup import startup_dirs
from termgrade.scoring.review.tests_texts import read_test_texts, tests_paths, tests_words
from termgrade.scoring.review.toolenv import ToolEnv
from termgrade.task import CONTAINER, Task

__all__ = [
    "GRADER_DIR",
    "GRADER_OWNED",
    "GRADER_RUN_DIR",
    "TESTS_SOURCE",
    "GradingPolicy",
]

GRADER_DIR = str(CONTAINER.grader_dir)
GRADER_RUN_DIR = str(CONTAINER.grader_run_dir)
TESTS_SOURCE = "tests-source"
"""Where the tests are staged in the grader's read-only directory (``GRADER_DIR``): a name
no ``import`` can reach (that directory is on every Python's path: a ``tests`` there
would shadow a project's own ``tests`` package). The broker copies them to ``/tests``."""
GRADER_OWNED = tuple(str(p) for p in CONTAINER.grader_owned)

LIBRARY_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/local/lib", "/lib/*-linux-gnu",
                "/usr/lib/*-linux-gnu", "/usr/local/lib/*-linux-gnu")
"""Directories the dynamic loader searches."""
LIBRARY_TOPS = ("/lib", "/usr/lib", "/usr/local/lib")
KEPT_PRISTINE = ("/etc/ld.so.cache",)
"""Files a package install in the agent's container rewrites as a side effect
(``ldconfig``): never carried and no finding; the scoring container has the image's, or
the one the grader rebuilds there with the image's ``ldconfig`` when the agent's work
carries shared libraries or loader configuration."""
BYTECODE_CACHE = "__pycache__"
_CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
"""Code in an instruction: a fenced block, or an inline span."""
_PYTHONPATH = re.compile(r"\bPYTHONPATH=(\"[^\"]*\"|'[^']*'|[^\s;&|]+)")
"""A ``PYTHONPATH=`` assignment in a script (``export PYTHONPATH=/app:$PYTHONPATH``)."""


@dataclass(frozen=True)
class GradingPolicy:
    closure: tuple[str, ...] = ()
    """The verifier's closure: paths mounted read-only in the scoring container."""
    path_dirs: tuple[str, ...] = tuple(VERIFIER_PATH.split(":"))
    grader: tuple[str, ...] = field(default=GRADER_OWNED)
    tool_env: ToolEnv = field(default=ToolEnv())
    """What test.sh's environment adds to the image's tools' search paths and start-up
    reads (``PERL5LIB``, ``GIT_CONFIG_GLOBAL``...)."""
    tests_files: frozenset[str] = frozenset()
    """The names of the tests' own files (``lib.sh``): bash's ``source lib.sh`` looks on
    ``PATH`` before the tests' working directory."""
    tests_words: frozenset[str] = frozenset()
    """Every word of the tests' texts that could name a program they run
    (:mod:`termgrade.scoring.review.tool_reads`)."""
    instruction_words: frozenset[str] = frozenset()
    """The words the instruction sets in code (`` `colfmt` ``, a fenced block): a tool it
    asks the agent to install is the agent's work, wherever a script probes for it; a
    passing mention in prose ("python's json, jq, gojq") asks for nothing (round 19)."""
    tests_paths: frozenset[str] = frozenset()
    """Every absolute path the tests' texts name: the image programs they run by path
    (:mod:`termgrade.scoring.review.tool_reads`)."""
    python_startup: tuple[str, ...] = ()
    """Directories a ``PYTHONPATH`` test.sh exports, or the task's ``[verifier] env`` sets,
    puts on every Python's start-up path (:mod:`termgrade.scoring.review.python_startup`)."""

    @cached_property
    def _closure(self) -> PathSet:
        return PathSet(self.closure)

    @cached_property
    def _grader(self) -> PathSet:
        return PathSet(self.grader)

    @cached_property
    def _programs_dirs(self) -> PathSet:
        return PathSet(tuple(sorted({
            posixpath.dirname(p) for p in self.tests_paths
            if posixpath.dirname(p) not in ("", "/")} | set(self.path_dirs))))

    def near_tests_program(self, path: str) -> bool:
        """Is ``path`` below the directory of a path the tests name (where an image
        program they run by its path may look for what it loads: the stand-in review
        decides, :func:`termgrade.scoring.review.tool_reads.beside_tests_program`)?"""
        return path in self._programs_dirs

    @classmethod
    def for_task(cls, task: Task, closure: tuple[str, ...] = (),
                 path: str = VERIFIER_PATH, tool_env: ToolEnv | None = None
                 ) -> GradingPolicy:
        """``path``: the PATH test.sh runs with (the image's, then the grader's fixed
        directories): every directory on it is one where a tool can be shadowed.
        ``tool_env``: what the rest of test.sh's environment adds."""
        path = task.config.verifier.env.get("PATH", path)
        tests = task.paths.tests_dir
        names = frozenset(p.name for p in tests.rglob("*") if p.is_file()) \
            if tests.is_dir() else frozenset()
        texts = [text for _name, text in read_test_texts(tests)]
        exported = [m.group(1).strip("'\"") for text in texts
                    for m in _PYTHONPATH.finditer(text)]
        exported += [task.config.verifier.env.get("PYTHONPATH", "")]
        return cls(closure=closure,
                   path_dirs=tuple(p for p in path.split(":") if p.startswith("/")),
                   tool_env=tool_env or ToolEnv(),
                   tests_files=names,
                   tests_words=tests_words(texts),
                   tests_paths=tests_paths(texts),
                   instruction_words=tests_words(
                       a or b for a, b in _CODE.findall(task.instruction)),
                   python_startup=startup_dirs(exported))

    def grader_owned(self, path: str) -> bool:
        return path in self._grader

    def in_closure(self, path: str) -> bool:
        return path in self._closure

    def above_protected(self, path: str) -> bool:
        """Deleting or replacing ``path`` would take part of the closure or the grader's
        paths with it."""
        return self._closure.above(path) or self._grader.above(path)

    def silently_kept(self, path: str) -> bool:
        """A closure path whose change in the agent's container is no finding: the
        scoring container keeps the image's copy (the loader cache, bytecode caches)."""
        return path in KEPT_PRISTINE or (
            self.in_closure(path)
            and (f"/{BYTECODE_CACHE}/" in path or path.endswith(f"/{BYTECODE_CACHE}")))

    def watches(self, path: str) -> bool:
        """Could an entry here shadow the verifier (a PATH or loader directory)?"""
        return self.watched_dir(posixpath.dirname(path))

    def watched_dir(self, parent: str) -> bool:
        """Could an entry in directory ``parent`` shadow the verifier?"""
        return parent in self.path_dirs or (
            parent.startswith(LIBRARY_TOPS) and any(fnmatch(parent, p) for p in LIBRARY_DIRS))

    def plain_dir(self, parent: str) -> bool:
        """Is directory ``parent`` outside the closure and the grader's paths, and not
        one where an entry could shadow the verifier? Then a new regular file in it is
        the agent's work unless it is itself one of the protected paths."""
        return not (parent in self._closure or parent in self._grader
                    or self.watched_dir(parent))

    def named(self, path: str) -> bool:
        """Is ``path`` itself a protected path, one the grader keeps, or an ancestor of
        one?"""
        return (path in self._closure.exact or path in self._grader.exact
                or path in KEPT_PRISTINE or self.above_protected(path))

    def shadows(self, path: str, *, executable: bool, is_dir: bool, existed: bool) -> str | None:
        """Why a carried entry would change what the verifier runs, or None.

        ``existed``: the image has an entry at this path (the agent modified, retyped
        or deleted it rather than adding it).
        """
        parent, name = posixpath.split(path)
        if parent in self.path_dirs and (executable or is_dir or existed) and (
                PYTHON_NAME.match(name) or any(fnmatch(name, t) for t in VERIFIER_TOOLS)):
            return f"shadows the verifier's `{name}` on its PATH"
        if existed and ".so" in name and any(fnmatch(parent, p) for p in LIBRARY_DIRS):
            return "replaces a shared library of the image where the dynamic loader looks"
        return None
