"""The transfer set's shape: its roots (a path and why it is in the set) and what the set
answers about a path (is a created file carried here, a change to an image file, is it
asked for, only named by the tests, an input). How a task's set is derived from its
texts, its declarations and the reference's run is
:mod:`termgrade.scoring.review.transfer`'s."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from termgrade.scoring.review.pathset import PathSet

__all__ = ["ACCOUNT_FILES", "CLOSURE_HINT", "ROOT_RANK", "SCRATCH", "TOO_WIDE", "TransferRoot",
           "TransferSet"]

ACCOUNT_FILES = ("/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow")
SCRATCH = ("/tmp", "/var/tmp", "/dev", "/proc", "/sys", "/run", "/var/run", "/var/cache",
           "/var/lib/apt/lists", "/root/.cache")
"""Scratch and caches: what the agent created here is not carried unless the task's text
names the path (a build tree in ``/tmp``, pip's and apt's caches are not deliverables)."""
TOO_WIDE = frozenset({"/", "/usr", "/etc", "/var", "/lib", "/lib64", "/lib32", "/bin",
                      "/sbin", "/opt", "/root", "/home", "/tmp", "/dev", "/proc", "/sys",
                      "/run", "/boot", "/mnt", "/media", "/srv", "/usr/lib", "/usr/share",
                      "/usr/local", "/usr/local/lib", "/usr/bin", "/usr/sbin",
                      "/usr/local/bin", "/usr/local/sbin", "/usr/lib64"})
"""Directories too wide to stand for one path's access: never a root, never a way to one."""
ROOT_RANK = {"tests": 0, "input": 0.5, "accounts": 1, "workdir": 2, "reference-dir": 3,
             "reference": 3, "instruction": 4, "declared": 5}
"""Of two reasons for one root, the stronger (an asked-for path over one only read; an
input over a path the tests name, which decides nothing)."""


@dataclass(frozen=True)
class TransferRoot:
    path: str
    """Absolute container path (resolved through the image's symlinks)."""
    why: str
    """Where it comes from: ``declared``, ``workdir``, ``instruction``, ``reference`` (the
    task asks for changes here), ``tests`` (named only by the tests: what the agent
    created there is carried, even in scratch; the image's file stays the image's),
    ``input`` (an image file or directory the instruction or the tests name that the
    recorded reference solution left as it was: an input, a checker or ground truth,
    read, not asked for; it wins over a wider root around it),
    ``accounts`` (merged: new users and groups only), ``reference-dir`` (an image
    directory the reference changed itself, its mode or owner, or deleted and made anew:
    asked for alone, not what the image has in it; what the reference changed in it is
    in the footprint path by path)."""

    @property
    def asked(self) -> bool:
        """Does the task ask for a deliverable here (so the agent may replace an image
        file at this path)? Paths only the tests name are read by them, not asked for."""
        return self.why in ("declared", "instruction", "reference")

    @property
    def changes(self) -> bool:
        """Are changes to the image's files here carried (not only what the agent
        created)?"""
        return self.why in ("declared", "instruction", "reference", "workdir", "accounts")


@dataclass(frozen=True)
class TransferSet:
    roots: tuple[TransferRoot, ...]
    declared: bool = False
    """A separate-mode task: its declared artifacts are the whole set, nothing derived."""
    mentioned: frozenset[str] = frozenset()
    """Base names of the paths the instruction and the tests name: a left-out entry with
    one of them looks like the deliverable (said with a hint)."""
    trust_asked: bool = False
    """The task asks for the system's trust store: its instruction names a path of it
    (``/usr/local/share/ca-certificates/``) or the command that rebuilds it
    (``update-ca-certificates``, ``update-ca-trust``, ``c_rehash``, ``openssl rehash``):
    what that command writes (``/etc/ssl/certs/<hash>.0``, the bundle) is asked for."""

    @cached_property
    def _all(self) -> PathSet:
        return PathSet(tuple(r.path for r in self.roots if r.why != "reference-dir"))

    @cached_property
    def _through(self) -> PathSet:
        return PathSet(tuple(r.path for r in self.roots))

    @cached_property
    def _alone(self) -> frozenset[str]:
        """Roots that ask for a directory alone (``reference-dir``)."""
        return frozenset(r.path for r in self.roots if r.why == "reference-dir")

    @cached_property
    def _changes(self) -> PathSet:
        return PathSet(tuple(r.path for r in self.roots if r.changes))

    @cached_property
    def _asked(self) -> PathSet:
        return PathSet(tuple(r.path for r in self.roots if r.asked))

    @cached_property
    def _scratch(self) -> PathSet:
        return PathSet(SCRATCH)

    @cached_property
    def _inputs(self) -> PathSet:
        return PathSet(tuple(r.path for r in self.roots if r.why == "input"))

    @cached_property
    def _by_path(self) -> dict[str, TransferRoot]:
        """Each root by its path (of two at one path, the stronger reason)."""
        found: dict[str, TransferRoot] = {}
        for root in self.roots:
            key = root.path.rstrip("/") or "/"
            known = found.get(key)
            if known is None or ROOT_RANK.get(root.why, 0) > ROOT_RANK.get(known.why, 0):
                found[key] = root
        return found

    def _covering(self, path: str) -> Iterator[TransferRoot]:
        """The roots at ``path`` and above it, deepest first."""
        where = path.rstrip("/") or "/"
        while True:
            root = self._by_path.get(where)
            if root is not None:
                yield root
            if where == "/":
                return
            where = where.rpartition("/")[0] or "/"

    def _deepest(self, path: str, wanted: Callable[[TransferRoot], bool]) -> bool:
        """Is the deepest root around ``path`` that decides (an ``input``, or one that
        ``wanted`` accepts) not an input? ``tests`` roots decide nothing."""
        for root in self._covering(path):
            if root.why == "input":
                return False
            if wanted(root):
                return True
        return False

    def __contains__(self, path: object) -> bool:
        """Is ``path`` inside a root (any change there may be the agent's work)?"""
        return path in self._all or path in self._alone

    def carries_changes(self, path: str) -> bool:
        """Is a change to an image file at ``path`` carried? The deepest root around it
        decides: one that asks for changes, not an ``input`` below it (a named input in
        the working directory, an image file inside a named input directory), while a
        deeper root inside an input (the reference's changed file, a declared artifact)
        asks again. ``tests`` roots decide nothing."""
        if path in self._alone:
            return True
        if path not in self._changes:
            return False
        return path not in self._inputs or self._deepest(path, lambda r: r.changes)

    def carries_created(self, path: str) -> bool:
        """Is an entry the agent created at ``path`` carried (subject to the stand-in
        review)? Everywhere but scratch, the closure and the grader's paths (those two are
        the review's); in scratch only under a root. In separate mode only in the set."""
        if self.declared:
            return path in self._all
        return path in self._all or path not in self._scratch

    def above(self, path: str) -> bool:
        """Is ``path`` a strict ancestor of a root (a directory the set passes through)?"""
        return self._through.above(path)

    def asked_below(self, path: str) -> bool:
        """Is ``path`` a directory on the way to a path the task asks for (a strict ancestor
        of an asked-for root), and not a tree too wide to stand for one path's access?"""
        return self._asked.above(path) and (path.rstrip("/") or "/") not in TOO_WIDE

    def tests_only(self, path: str) -> bool:
        """Is ``path`` inside a root only the tests name (read or written by them, not
        asked for)?"""
        return path in self._all and not self.carries_changes(path) \
            and path not in self._alone

    def names(self, path: str) -> bool:
        """Is ``path`` itself a root (a text of the task names this very path)?"""
        return path in self._all.exact or path in self._alone

    def asked(self, path: str) -> bool:
        """Is ``path`` inside a root the task asked for (not only one its tests read),
        with no input root between it and that root?"""
        if path in self._alone:
            return True
        if path not in self._asked:
            return False
        return path not in self._inputs or self._deepest(path, lambda r: r.asked)

    def accounts(self, path: str) -> bool:
        """Is ``path`` an account database merged entry by entry (new users and groups
        only), not carried as the agent wrote it?"""
        return path in ACCOUNT_FILES and not self.asked_exactly(path)

    def in_texts(self, path: str) -> bool:
        """Do the task's own words name ``path`` (the instruction or a declaration names
        it, or the instruction or the tests name a file of its name), not only the
        reference's footprint?"""
        return self.asked_exactly(path) or posixpath.basename(path) in self.mentioned

    def asked_exactly(self, path: str) -> bool:
        """Is ``path`` (or a directory above it) named by the instruction or declared, not
        merely changed by the reference?"""
        return any(r.why in ("declared", "instruction") and (
            path == r.path or path.startswith(r.path.rstrip("/") + "/")) for r in self.roots)

    def hint(self, path: str, *, in_closure: bool = False) -> str | None:
        """Why a left-out ``path`` looks like the deliverable, or None. ``in_closure``:
        the path lies in the verifier's closure (the image's own interpreter, its site
        directories, the tools the tests run), which B keeps as the image has it."""
        name = posixpath.basename(path)
        named = name in self.mentioned
        if in_closure:
            return ((f"`{name}` is named by the task's text; " if named else "")
                    + CLOSURE_HINT)
        if named:
            return f"`{name}` is named by the task's text"
        return None

    def describe(self) -> list[str]:
        """One line per root: the path and why it is in the set (``termgrade run``), then
        the rule for the rest."""
        lines = [f"{r.path}  ({r.why})" for r in self.roots]
        if not self.declared:
            lines.append("+ what the agent created anywhere else (not scratch: "
                         f"{', '.join(SCRATCH[:3])}, ...), under the stand-in review")
        return lines


CLOSURE_HINT = ("installed into the verifier's closure (the image's own Python or tools, "
                "which the scoring container keeps as the image has them): install into a "
                "virtual environment or a directory of its own, e.g. /usr/local/bin")
"""The note of a left-out entry in the verifier's closure (``pip install`` into the
image's Python)."""
