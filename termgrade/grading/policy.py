"""What the agent may write, what the verifier searches, and where the grader works.

The one statement of the trust boundary in code (``docs/grading.md`` says it in words):
the agent phase may change the *writable paths*; a change anywhere else is a finding,
and only the writable paths of the agent's container reach the container that scores it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cached_property

from termgrade.task import CONTAINER, Task

DEFAULT_WRITABLE_PATHS = (
    "/app", "/tmp", "/var/tmp", "/root", "/home", "/srv", "/workspace", "/data",
    "/var/log", "/mnt", "/media",
)
"""Where an agent's work lives unless ``[verifier] writable_paths`` in task.toml adds more."""

GRADER_DIR = str(CONTAINER.grader_dir)
GRADER_RUN_DIR = str(CONTAINER.grader_run_dir)
GRADER_OWNED = tuple(str(p) for p in CONTAINER.grader_owned)

VERIFIER_PATH = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
VERIFIER_TOOLS = ("bash", "sh", "dash", "env", "timeout", "tee", "head", "cat", "python",
                  "python3", "python3.*", "pytest", "py.test", "pip", "pip3", "uv", "uvx")
"""Executables the verifier (test.sh and the grader) runs by name."""
PYTHON_DIRS = ("/usr/lib/python3*", "/usr/lib/python3*/lib-dynload",
               "/usr/lib/python3/dist-packages",
               "/usr/local/lib/python3*", "/usr/local/lib/python3*/site-packages",
               "/usr/local/lib/python3*/dist-packages", "/opt/venv/lib/python3*/site-packages")
"""Directories on the verifier's ``sys.path`` (the image's interpreters and venv)."""
LIBRARY_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/local/lib", "/lib/*-linux-gnu",
                "/usr/lib/*-linux-gnu", "/usr/local/lib/*-linux-gnu")
"""Directories the dynamic loader searches."""
BYTECODE_CACHE = "__pycache__"


def _normal(path: str) -> str:
    return posixpath.normpath(path) if path.startswith("/") else path


class PathSet:
    """Directories, and the one question asked of them per changed path: is this path one
    of them or inside one? (A set lookup and one ``startswith`` over a tuple.)"""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self._exact = frozenset(roots)
        self._prefixes = tuple(root + "/" for root in roots)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and (path in self._exact or path.startswith(self._prefixes))


def under(path: str, roots: tuple[str, ...]) -> bool:
    return path in PathSet(roots)


SEARCHED_TREES = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/opt/venv")
"""Where the directories the verifier searches live (see :meth:`GradingPolicy.shadows`)."""


@dataclass(frozen=True)
class GradingPolicy:
    writable: tuple[str, ...] = DEFAULT_WRITABLE_PATHS
    path_dirs: tuple[str, ...] = tuple(VERIFIER_PATH.split(":"))

    @cached_property
    def _writable(self) -> PathSet:
        return PathSet(self.writable)

    @cached_property
    def _shadow_scope(self) -> PathSet:
        """The writable paths that reach a directory the verifier searches."""
        searched = SEARCHED_TREES + self.path_dirs
        return PathSet(tuple(root for root in self.writable
                             if under(root, searched) or any(under(s, (root,)) for s in searched)))

    @classmethod
    def for_task(cls, task: Task) -> GradingPolicy:
        extra = tuple(_normal(p) for p in task.config.verifier.writable_paths)
        path = task.config.verifier.env.get("PATH", VERIFIER_PATH)
        return cls(writable=tuple(dict.fromkeys(DEFAULT_WRITABLE_PATHS + extra)),
                   path_dirs=tuple(p for p in path.split(":") if p.startswith("/")))

    def is_writable(self, path: str) -> bool:
        return path in self._writable

    def shadows(self, path: str, *, executable: bool, is_dir: bool) -> str | None:
        """Why an entry in a writable path shadows what the verifier runs, or None.

        Only directories the verifier searches matter (a task that widens its writable
        paths into one of them gets this check there): its PATH, Python's path, the
        dynamic loader's directories.
        """
        if path not in self._shadow_scope:
            return None  # no writable path here reaches a directory the verifier searches
        parent, name = posixpath.split(path)
        if parent in self.path_dirs and (executable or is_dir) \
                and any(fnmatch(name, tool) for tool in VERIFIER_TOOLS):
            return f"shadows the verifier's `{name}` on its PATH"
        if any(fnmatch(parent, pattern) for pattern in PYTHON_DIRS) and (
            is_dir or name.endswith((".py", ".pyc", ".pth", ".so"))
        ) and name != BYTECODE_CACHE:
            return "adds Python code where the verifier's Python looks for modules"
        if any(fnmatch(parent, pattern) for pattern in LIBRARY_DIRS) and ".so" in name:
            return "adds a shared library where the dynamic loader looks"
        return None
