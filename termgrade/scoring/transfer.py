"""The transfer set: the only part of the agent's work the scoring container sees.

The scoring container B is the image's own bytes. Of everything the agent changed in its
container A, only the entries inside the task's transfer set are carried into B; the
rest stays in A and is reported as left out (how many, where), never silently dropped.
A file the agent wrote anywhere else (a tool earlier on ``PATH``, the ELF interpreter, an
NSS module, a ``pyvenv.cfg``, a login profile) does not exist for any process in B.

The set, in order of authority:

1. **declared**: ``artifacts`` in task.toml (Harbor's name): exactly those paths, and in
   separate mode nothing else;
2. otherwise **derived**, each root with the reason it is there:

   - the image's working directory (``WORKDIR``, or ``[environment] workdir``), whole;
   - every absolute path (and ``~/`` path) named in ``instruction.md``, and the directory
     of each such file (unless it is a system tree such as ``/etc`` or ``/usr/bin``);
   - every absolute path named in the task's tests (``tests/``);
   - the reference solution's footprint, as ``verify`` recorded it (what ``solve.sh``
     changed: a deliverable in ``/etc``, ``/opt`` or an in-place fix of an image file);
   - the account databases (``/etc/passwd``, ``group``, ``shadow``, ``gshadow``) and
     ``/home``: a user the task asks to create.

Roots are resolved through the image's own symlinks (``/bin/x`` is ``/usr/bin/x`` on a
merged-``/usr`` image), so a root names the place the kernel writes. The grader's own
paths are never in the set. Inside the set, the review still makes a finding of what
would stand in for the verifier (see :mod:`termgrade.scoring.integrity`): a roots's being
named only by the tests lets the agent's work there be read, not let it replace an image
tool or library.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from termgrade.scoring.pathset import PathSet
from termgrade.scoring.reference import ReferenceRecord
from termgrade.task import CONTAINER, Task

__all__ = ["ACCOUNT_FILES", "TransferRoot", "TransferSet", "derive_transfer_set",
           "image_resolver", "named_paths"]

ACCOUNT_FILES = ("/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow")
HOMES = "/home"
_PATH = re.compile(r"(?<![\w.~/$-])(~?/[A-Za-z0-9._+@%=,:-]+(?:/[A-Za-z0-9._+@%=,:-]+)*/?)")
"""An absolute (or ``~/``) path in prose or code: starts after a non-path character."""
_TOO_WIDE = frozenset({"/", "/usr", "/etc", "/var", "/lib", "/lib64", "/lib32", "/bin",
                       "/sbin", "/opt", "/root", "/home", "/tmp", "/dev", "/proc", "/sys",
                       "/run", "/boot", "/mnt", "/media", "/srv", "/usr/lib", "/usr/share",
                       "/usr/local", "/usr/local/lib", "/usr/bin", "/usr/sbin",
                       "/usr/local/bin", "/usr/local/sbin", "/usr/lib64"})
"""Directories a text may name without asking for everything in them: a root here would
carry a whole system tree, so such a name adds nothing (its files are named one by one)."""
_EXCLUDED_PREFIXES = ("/proc", "/sys", "/dev", "/tmp/pytest-of-")
_TEXT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".txt", ".md", ".json", ".toml", ".yaml",
                            ".yml", ".cfg", ".ini", ".conf", ".js", ".ts", ".rb", ".pl", ".c",
                            ".h", ".go", ".rs", ".java", ".sql", ".mk", ""})
ResolveFn = Callable[[str], str | None]
MAX_TEST_BYTES = 2 << 20
"""Bytes of test files read for path names (a huge fixture adds nothing but time)."""


@dataclass(frozen=True)
class TransferRoot:
    path: str
    """Absolute container path (resolved through the image's symlinks)."""
    why: str
    """Where it comes from: ``declared``, ``workdir``, ``instruction``, ``tests``,
    ``reference``, ``beside`` (the directory of a file the instruction or the reference
    names: carried, but not asked for), ``accounts``."""

    @property
    def asked(self) -> bool:
        """Does the task ask for a deliverable here (so the agent may replace an image
        file at this path)? Paths only the tests name are read by them, not asked for."""
        return self.why in ("declared", "instruction", "reference")


@dataclass(frozen=True)
class TransferSet:
    roots: tuple[TransferRoot, ...]
    declared: bool = False
    """A separate-mode task: its declared artifacts are the whole set, nothing derived."""

    @cached_property
    def _all(self) -> PathSet:
        return PathSet(tuple(r.path for r in self.roots))

    @cached_property
    def _asked(self) -> PathSet:
        return PathSet(tuple(r.path for r in self.roots if r.asked))

    def __contains__(self, path: object) -> bool:
        return path in self._all

    def above(self, path: str) -> bool:
        """Is ``path`` a strict ancestor of a root (a directory the set passes through)?"""
        return self._all.above(path)

    def asked(self, path: str) -> bool:
        """Is ``path`` inside a root the task asked for (not only one its tests read)?"""
        return path in self._asked

    def describe(self) -> list[str]:
        """One line per root: the path and why it is in the set (``termgrade run``)."""
        return [f"{r.path}  ({r.why})" for r in self.roots]


def named_paths(text: str) -> list[str]:
    """Absolute paths a text names (``~/x`` as ``/root/x``), in order, without duplicates,
    trailing punctuation dropped; shell variables and URLs are not paths."""
    found: dict[str, None] = {}
    for match in _PATH.finditer(text):
        start = match.start()
        if text[max(0, start - 3):start].endswith(("://", ":/")) or text[start - 1:start] == ":":
            continue  # part of a URL
        raw = match.group(1).rstrip(".,:;")
        if raw.startswith("~/"):
            raw = "/root" + raw[1:]
        clean = posixpath.normpath(raw)
        if clean.startswith("//"):
            continue
        found.setdefault(clean, None)
    return list(found)


def _test_texts(tests_dir: Path) -> Iterable[tuple[str, str]]:
    budget = MAX_TEST_BYTES
    for path in sorted(tests_dir.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.suffix not in _TEXT_SUFFIXES:
            continue
        if "__pycache__" in path.parts:
            continue
        try:
            data = path.read_bytes()[:budget]
        except OSError:
            continue
        budget -= len(data)
        yield str(path.relative_to(tests_dir)), data.decode("utf-8", "replace")
        if budget <= 0:
            return


def _keep(path: str) -> bool:
    if path in _TOO_WIDE or path.startswith(_EXCLUDED_PREFIXES):
        return False
    return not any(path == owned or path.startswith(owned + "/") or owned.startswith(path + "/")
                   for owned in map(str, CONTAINER.grader_owned))


def derive_transfer_set(task: Task, *, workdir: str | None,
                        reference: ReferenceRecord | None = None,
                        resolve: ResolveFn | None = None) -> TransferSet:
    """The task's transfer set (see the module's docstring).

    ``workdir``: the image's working directory (``[environment] workdir`` wins).
    ``resolve``: maps a container path through the image's symlinks (None: as written).
    """
    declared = list(task.config.artifacts)
    separate = task.config.separate_verifier
    candidates: list[tuple[str, str]] = [(p, "declared") for p in declared]
    if not separate:  # Harbor's separate verifier gets the declared artifacts, nothing else
        where = task.config.environment.workdir or workdir
        if where and where.startswith("/"):
            candidates.append((where, "workdir"))
        instruction = task.paths.instruction
        if instruction.is_file():
            candidates += [(p, "instruction") for p in named_paths(
                instruction.read_text(errors="replace"))]
        candidates += [(p, "reference") for p in (reference.footprint if reference else [])]
        for _name, text in _test_texts(task.paths.tests_dir):
            candidates += [(p, "tests") for p in named_paths(text)]
        candidates += [(p, "accounts") for p in (*ACCOUNT_FILES, HOMES)]
    # The directory of a file the task asks for is its deliverable's home too (a config
    # beside the one named), unless it is a system tree.
    candidates += [(posixpath.dirname(posixpath.normpath(p)), "beside") for p, why in candidates
                   if why in ("instruction", "reference") and posixpath.splitext(p)[1]]
    roots: dict[str, TransferRoot] = {}
    for raw, why in candidates:
        path = posixpath.normpath(raw)
        if why not in ("accounts", "workdir") and not _keep(path):  # "beside" too: narrow
            continue
        resolved = (resolve(path) if resolve else None) or path
        for each in dict.fromkeys((path, resolved)):
            if not _keep(each) and why not in ("accounts", "workdir"):
                continue
            known = roots.get(each)
            if known is None or (not known.asked and TransferRoot(each, why).asked):
                roots[each] = TransferRoot(each, why)
    return TransferSet(tuple(sorted(roots.values(), key=lambda r: r.path)), declared=separate)


def image_resolver(view: str) -> ResolveFn:
    """Resolves a path's directories through the image's own symlinks (the last name is
    kept as written: a root is the entry the agent writes there). ``view``: the host
    directory of the image's read-only filesystem."""
    from termgrade.sandbox import pristine

    def resolve(path: str) -> str | None:
        parent, name = posixpath.split(path)
        done = pristine.resolve(view, parent) if parent != "/" else "/"
        return posixpath.join(done, name) if done else None

    return resolve
