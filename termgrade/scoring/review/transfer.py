"""The transfer set: which of the agent's changes the scoring container sees.

The scoring container B is the image's own bytes plus the agent's work, and the rule for
"the agent's work" follows what a change *is*, not where a text happened to name it:

1. **Created** (a path the image did not have): carried wherever it lies, under the
   stand-in review (:mod:`termgrade.scoring.review.standins`: a created file that would change
   what an image tool, the loader, pytest or Python computes is left out and said).
   Scratch and caches (``/tmp``, ``/var/tmp``, ``/run``, ``/var/cache``, ``~/.cache``) are
   not carried unless the task's text names the path; the verifier's closure and the
   grader's paths never are.
2. **Changed** (an image file edited, replaced, deleted, its mode changed): carried only
   where the task asks for it: the declared ``artifacts``; the image's working directory;
   the exact paths ``instruction.md`` names (a named directory with what is in it, a named
   file alone, never its directory); the exact paths the reference solution changed, as
   ``verify`` recorded them (:mod:`termgrade.scoring.reference`). A path only the tests
   name is read by them, not asked for: the image's file there stays the image's. With a
   recorded reference run, an image path the instruction or the tests name that the
   reference left as it was is an **input** (read, not asked for): an image file changed
   at or under it is not carried unless a deeper root asks for it (a declared artifact, a
   path the reference changed), even inside the working directory or a named directory.
3. **Accounts**: the users and groups the agent created are carried (merged line by line
   into the image's ``/etc/passwd``, ``group``, ``shadow``, ``gshadow``; a new user's login
   shell must be one the image lists); a change to the image's own entries only where the
   instruction or a declaration names the file (:mod:`termgrade.scoring.review.accounts`).

In Harbor's separate mode the declared artifacts are the whole set, nothing else. Roots
are resolved through the image's own symlinks (``/bin/x`` is ``/usr/bin/x`` on a
merged-``/usr`` image), so a root names the place the kernel writes; a root whose last
name is itself an image symlink adds its target too, of the same kind (writing through
``sites-enabled/shop`` changes ``sites-available/shop``), unless the target is too wide,
a system tree or the grader's. ``~user/x`` is that user's home (the image's
``/etc/passwd``); ``~/x`` is root's, and in the instruction also the home of the one
regular user it names. The grader's own paths are never in the set.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatch

from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review.pathset import PathSet
from termgrade.scoring.review.spellings import built_paths, relative_names
from termgrade.scoring.review.standins import TRUST_PATHS
from termgrade.scoring.review.tests_texts import read_test_texts
from termgrade.scoring.review.transfer_set import (
    ACCOUNT_FILES,
    CLOSURE_HINT,
    ROOT_RANK,
    SCRATCH,
    TOO_WIDE,
    TransferRoot,
    TransferSet,
)
from termgrade.task import CONTAINER, Task

__all__ = ["ACCOUNT_FILES", "CLOSURE_HINT", "SCRATCH", "TransferRoot", "TransferSet",
           "derive_transfer_set", "image_homes", "image_link_target", "image_resolver",
           "instruction_paths", "named_paths"]

_PATH = re.compile(r"(?<![\w.~/$-])(~?/[A-Za-z0-9._+@%=:-]+(?:/[A-Za-z0-9._+@%=:-]+)*/?)")
"""An absolute (or ``~/``) path in prose or code: starts after a non-path character."""
_HOME = re.compile(r"\$\{HOME\}(?=/)|\$HOME(?=/)|~root(?=/)")
"""Spellings of root's home before a path (``$HOME/x``, ``${HOME}/x``, ``~root/x``)."""
_USER_HOME = re.compile(r"(?<![\w.~/$-])~([a-z_][a-z0-9_.-]*)(?=/)")
"""``~user/x``: the home of ``user`` in the image's ``/etc/passwd``."""
_TILDE = re.compile(r"(?<![\w.~/$-])~(?=/)")
_CODE_WORD = re.compile(r"`([A-Za-z0-9_][A-Za-z0-9._+-]*)`")
"""A command or file name the instruction sets in code (`` `wordstat` ``)."""
REGULAR_UIDS = range(1000, 60000)
"""Users of the image whose name in the instruction makes its ``~/x`` their home too."""
MAX_PASSWD_BYTES = 1 << 20
_SYSTEM_TREES = ("/usr/include", "/usr/local/include", "/etc/alternatives", "/etc/perl",
                 "/usr/share/perl5", "/usr/local/share", "/usr/libexec", "/etc/ssl",
                 "/etc/ld.so.conf.d", "/etc/profile.d", "/usr/lib/*-linux-gnu",
                 "/lib/*-linux-gnu", "/usr/local/lib/*-linux-gnu", "/usr/lib/python3*",
                 "/usr/local/lib/python3*")
"""Directories a text may name without asking for everything in them: a root here would
let the agent change a whole system tree (a library, a header, an alternatives link the
image's tools use), so such a name adds nothing; its files are named one by one."""
_EXCLUDED_PREFIXES = ("/proc", "/sys", "/dev", "/tmp/pytest-of-")
ResolveFn = Callable[[str], str | None]


def named_paths(text: str, homes: Mapping[str, str] | None = None) -> list[str]:
    """Absolute paths a text names (``~/x`` as ``/root/x``, ``~user/x`` as that user's
    home in ``homes``), in order, without duplicates, trailing punctuation dropped; shell
    variables and URLs are not paths."""
    found: dict[str, None] = {}
    if homes:
        text = _USER_HOME.sub(lambda m: f" {homes[m.group(1)].rstrip('/')}"
                              if m.group(1) in homes and homes[m.group(1)].startswith("/")
                              else m.group(0), text)
    text = _HOME.sub(" /root", text)
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


def _keep(path: str) -> bool:
    if path in TOO_WIDE or path.startswith(_EXCLUDED_PREFIXES) \
            or any(fnmatch(path, tree) for tree in _SYSTEM_TREES):
        return False
    return not any(path == owned or path.startswith(owned + "/") or owned.startswith(path + "/")
                   for owned in map(str, CONTAINER.grader_owned))


def image_homes(view: str) -> tuple[dict[str, str], frozenset[str]]:
    """Each user's home in the image's ``/etc/passwd`` (``view``: the image's filesystem
    on the host), and the regular users (uid in :data:`REGULAR_UIDS`)."""
    homes: dict[str, str] = {}
    regular: set[str] = set()
    try:
        with open(posixpath.join(view, "etc/passwd"), "rb") as file:
            data = file.read(MAX_PASSWD_BYTES).decode("utf-8", "replace")
    except OSError:
        return homes, frozenset()
    for line in data.splitlines():
        fields = line.split(":")
        if len(fields) < 7 or not fields[0] or not fields[5].startswith("/"):
            continue
        homes.setdefault(fields[0], posixpath.normpath(fields[5]))
        if fields[2].isdigit() and int(fields[2]) in REGULAR_UIDS:
            regular.add(fields[0])
    return homes, frozenset(regular)


def instruction_paths(text: str, homes: Mapping[str, str] | None = None,
                      regular: Iterable[str] = ()) -> list[str]:
    """The paths an instruction names: :func:`named_paths`, and where it names exactly
    one regular user of the image as a word (``deploy`` in "the user `deploy` keeps its
    scripts in its `~/bin`"), its ``~/x`` read in that user's home as well as root's."""
    paths = named_paths(text, homes)
    users = [u for u in regular if homes and u in homes and re.search(
        rf"(?<![\w/.~-]){re.escape(u)}(?![\w/-])", text)]
    if len(users) == 1 and _TILDE.search(text):
        paths += named_paths(_TILDE.sub(f"~{users[0]}", text), homes)
    return list(dict.fromkeys(paths))


def derive_transfer_set(task: Task, *, workdir: str | None,
                        reference: ReferenceRecord | None = None,
                        resolve: ResolveFn | None = None,
                        view: str | None = None) -> TransferSet:
    """The task's transfer set (see the module's docstring).

    ``workdir``: the image's working directory (``[environment] workdir`` wins).
    ``resolve``: maps a container path through the image's symlinks (None: as written).
    ``view``: the image's filesystem on the host: the resolver when none is given, each
    named link's target (:func:`image_link_target`), and users' homes for ``~user/x``.
    """
    if view is not None and resolve is None:
        resolve = image_resolver(view)
    homes, regular = image_homes(view) if view is not None else ({}, frozenset())
    footprint = _Footprint.of(reference, view)
    instruction_text = ""
    declared = list(task.config.artifacts)
    separate = task.config.separate_verifier
    candidates: list[tuple[str, str]] = [(p, "declared") for p in declared]
    mentioned: set[str] = set()
    if not separate:  # Harbor's separate verifier gets the declared artifacts, nothing else
        where = task.config.environment.workdir or workdir
        if where and where.startswith("/"):
            candidates.append((where, "workdir"))
        instruction = task.paths.instruction
        if instruction.is_file():
            text = instruction_text = instruction.read_text(errors="replace")
            named = instruction_paths(text, homes, regular) + [
                p for p in _in_workdir(relative_names(text), where, view)
                if view is not None and not _code(view, p)]
            candidates += [(p, _instruction_why(p, footprint, view, resolve)) for p in named]
            mentioned |= set(_CODE_WORD.findall(text))
        candidates += [(p, "reference-dir" if posixpath.normpath(p) in footprint.alone
                        else "reference") for p in footprint.paths]
        for name, text in read_test_texts(task.paths.tests_dir):
            named = named_paths(text, homes)
            if name.endswith(".py"):  # built from constants: as a literal absolute path
                named += built_paths(text)
            named += [p for p in _in_workdir(relative_names(text), where, view)
                      if view is not None and not _code(view, p)]
            candidates += [(p, _tests_why(p, footprint, view, resolve)) for p in named]
        candidates += [(p, "accounts") for p in ACCOUNT_FILES]
        mentioned |= {posixpath.basename(p) for p, why in candidates
                      if why in ("instruction", "input", "tests") and _keep(p)}
    trust = not separate and (any(
        why in ("instruction", "declared", "reference")
        and posixpath.normpath(p).startswith(_TRUST_ROOTS) for p, why in candidates)
        or bool(_TRUST_COMMAND.search(instruction_text)))
    if trust:  # what the command writes from what the agent added: asked for too
        candidates += [(p, "instruction") for p in _TRUST_ROOTS]
    if not separate and _GIT_CONFIG.search(instruction_text):  # any scope `git config` writes
        candidates += [(p, "instruction") for p in GIT_CONFIG_FILES]
    roots: dict[str, TransferRoot] = {}
    for raw, why in candidates:
        path = posixpath.normpath(raw)
        if why not in ("accounts", "workdir") and not _keep(path):
            continue
        resolved = (resolve(path) if resolve else None) or path
        target = image_link_target(view, resolved) if view and why != "accounts" else None
        for each in dict.fromkeys((path, resolved, *([target] if target else []))):
            if not _keep(each) and (why not in ("accounts", "workdir") or each == target):
                continue
            known = roots.get(each)
            if known is None or ROOT_RANK[why] > ROOT_RANK[known.why]:
                roots[each] = TransferRoot(each, why)
    return TransferSet(tuple(sorted(roots.values(), key=lambda r: r.path)), declared=separate,
                       mentioned=frozenset(mentioned), trust_asked=trust)


_TRUST_ROOTS = tuple(p.rstrip("/") for p in TRUST_PATHS)
"""The system trust store's places: a task that asks for one asks for the store."""
_TRUST_COMMAND = re.compile(r"\b(?:update-ca-certificates|update-ca-trust|c_rehash|"
                            r"openssl\s+rehash)\b")
"""The commands that rebuild the trust store (their outputs are what the task asks for)."""
GIT_CONFIG_FILES = ("/etc/gitconfig", "/root/.gitconfig", "/root/.config/git/config")
"""Where ``git config --system``, ``--global`` and git's XDG file write (root's)."""
_GIT_CONFIG = re.compile(r"\bgit\s+config\b|\bcore\.hooksPath\b|\.?gitconfig\b")
"""An instruction that asks for git's configuration by its command, a key or its file's
name asks for every scope of it: a solution may write any (``--system`` or ``--global``)."""


@dataclass(frozen=True)
class _Footprint:
    """The reference's footprint as the rule reads it, made once per transfer set: its
    paths, as a set, and the image directories among them that stand for themselves
    alone (:func:`_reference_why`: one look at the image per path, not one per name)."""

    paths: tuple[str, ...]
    changed: PathSet
    alone: frozenset[str]

    @classmethod
    def of(cls, reference: ReferenceRecord | None, view: str | None) -> _Footprint:
        paths = tuple(reference.footprint) if reference is not None else ()
        normal = tuple(posixpath.normpath(p) for p in paths)
        return cls(paths, PathSet(normal), frozenset(
            p for p in normal if _reference_why(p, view) == "reference-dir"))


def _instruction_why(path: str, footprint: _Footprint, view: str | None,
                     resolve: ResolveFn | None) -> str:
    """``instruction``, or ``input`` where a recorded reference run shows the named path
    is an image path the task does not ask to change (:func:`_left_alone`: a file or a
    directory). Without a footprint nothing tells (a named path stays asked for)."""
    return "input" if _left_alone(path, footprint, view, resolve, directories=True) \
        else "instruction"


def _tests_why(path: str, footprint: _Footprint, view: str | None,
               resolve: ResolveFn | None) -> str:
    """``tests``, or ``input`` where the tests name an image file (their ground truth, a
    checker) the recorded reference run left as it was: inside the working directory too,
    it stays the image's. A directory the tests name (to run or import from) stays
    ``tests``: it decides nothing."""
    return "input" if _left_alone(path, footprint, view, resolve, directories=False) \
        else "tests"


def _left_alone(path: str, footprint: _Footprint, view: str | None,
                resolve: ResolveFn | None, *, directories: bool) -> bool:
    """Does a recorded reference run (a non-empty footprint) show that ``path`` names an
    image regular file (or, with ``directories``, an image directory) that the reference
    left as it was? The path is followed through the image's own links inside the view
    (an absolute link resolves in the image, never on the host). Left as it was: no
    path of the footprint at it, at a link on the way, or above it; for a directory, no
    image entry below it that the reference changed (what the reference created there
    changes no image file: the directory is still an input, and its files are carried
    as created and as ``reference`` roots)."""
    from termgrade.sandbox import pristine

    if not footprint.paths or view is None:
        return False
    path = posixpath.normpath(path)
    final = pristine.resolve(view, path)
    if not final:
        return False  # the image lacks it (an output), a dangling link, a loop
    top = view.rstrip("/")
    try:
        mode = os.lstat(top + final).st_mode
    except OSError:
        return False
    is_dir = stat.S_ISDIR(mode)
    if not (stat.S_ISREG(mode) or (directories and is_dir)):
        return False
    forms = {path, (resolve(path) if resolve else None) or path, final}
    changed, alone = footprint.changed, footprint.alone
    if forms & changed.exact or any(  # it, or a new tree the reference made above it
            f in changed and not _only_image_dirs_above(f, changed, alone) for f in forms):
        return False
    if is_dir:
        below = tuple(f.rstrip("/") + "/" for f in forms)
        for each in changed.roots:
            if each.startswith(below) and _in_image(view, each):
                return False  # the reference changed an image entry inside: asked
    return True


def _only_image_dirs_above(path: str, changed: PathSet, alone: frozenset[str]) -> bool:
    """Are the footprint's paths above ``path`` all image directories the reference
    changed itself (``reference-dir``: they stand for themselves, not what is in them)?"""
    where = posixpath.dirname(path)
    while True:
        if where in changed.exact and where not in alone:
            return False
        if where == "/":
            return True
        where = posixpath.dirname(where)


def _in_workdir(words: list[str], workdir: str | None, view: str | None) -> list[str]:
    """Relative names (:func:`~termgrade.scoring.review.spellings.relative_names`) read in
    the working directory: those the image has there (without the image's view, none)."""
    if not workdir or not workdir.startswith("/") or view is None:
        return []
    paths = (posixpath.normpath(posixpath.join(workdir, w)) for w in words)
    return [p for p in paths if p.startswith(workdir.rstrip("/") + "/") and _in_image(view, p)]


_CODE_SUFFIXES = frozenset({".py", ".sh", ".bash", ".pl", ".pm", ".rb", ".js", ".mjs", ".php",
                            ".lua", ".tcl", ".so", ".jar", ".class"})


def _code(view: str, path: str) -> bool:
    """Is the image's file at ``path`` code (a known source suffix, or executable)? A
    text that names ``src/main.py`` relatively may be naming the deliverable (the
    reference fixed a helper, an honest solution the program itself): a relative name
    makes no input of code, only of data. A path a test builds from constants is read as
    a literal absolute path (a checker the tests reach as ``TOOLS / "validate.py"``)."""
    if posixpath.splitext(path)[1] in _CODE_SUFFIXES:
        return True
    try:
        info = os.stat(view.rstrip("/") + path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and bool(info.st_mode & 0o111)


def _in_image(view: str, path: str) -> bool:
    """Does the image have an entry at ``path`` (its directories resolved in the view)?"""
    from termgrade.sandbox import pristine

    parent, name = posixpath.split(path)
    where = pristine.resolve(view, parent) if parent != "/" else "/"
    if not where or not name:
        return False
    return os.path.lexists(view.rstrip("/") + posixpath.join(where, name))


def _reference_why(path: str, view: str | None) -> str:
    """``reference``, or ``reference-dir`` where the footprint names a directory the image
    has (the reference changed its mode or owner, or made it anew): that directory alone
    is asked for, not every image file in it (what the reference changed there is in the
    footprint path by path)."""
    from termgrade.sandbox import pristine

    if view is None:
        return "reference"
    final = pristine.resolve(view, posixpath.normpath(path))
    return "reference-dir" if final and os.path.isdir(view.rstrip("/") + final) \
        and not os.path.islink(view.rstrip("/") + final) else "reference"


def image_link_target(view: str, path: str) -> str | None:
    """Where the kernel writes through ``path`` when its last name is a symlink of the
    image (resolved as the container would, component by component), or None (no link,
    dangling, a loop). The caller keeps it only where a root may lie (not too wide, no
    system tree, not the grader's): the exact target, never the tree around it."""
    from termgrade.sandbox import pristine

    parent, name = posixpath.split(path)
    where = pristine.resolve(view, parent) if parent != "/" else "/"
    if not where or not name or not os.path.islink(
            view.rstrip("/") + posixpath.join(where, name)):
        return None  # the host path has no link in it above the last name: checked
    target = pristine.resolve(view, posixpath.join(where, name))
    return target if target and target != path else None


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
