"""Created files a tool reads instead of, or on top of, an image file by its own lookup.

Three real lookups of the base image's tools, each judged in the directory where the image
file lies (:mod:`termgrade.scoring.review.standins` applies them to created entries):

* GNU make reads the first of ``GNUmakefile``, ``makefile``, ``Makefile`` in its
  directory, then what that makefile ``include``\\ s (``-include local.mk``: an optional
  file read when it exists; a relative name looked up in make's directory first);
* git reads, inside a repository's git directory, more than its objects and refs:
  ``refs/replace/*`` (every read of an object returns the replacement's bytes),
  ``info/grafts``, ``shallow`` and ``objects/info/commit-graph`` (a commit's parents),
  ``objects/info/alternates`` and ``commondir`` (other object and ref stores), new packs
  (searched before loose objects), new refs (``git log --all`` lists a branch's commits;
  a tag is found before a branch of its name), a hook of a repository with a work tree,
  ``info/attributes``; a new loose object, a reflog or a bare repository's hook (run by a
  push: the agent's program) is work;
* gawk looks ``@include "NAME"`` and ``-i NAME`` up on ``AWKPATH``, by default
  ``.:/usr/share/awk``: a ``NAME.awk`` in the working directory of whoever runs it comes
  before the image's library file of that name.
"""

from __future__ import annotations

import posixpath
import re
import stat
from collections.abc import Callable
from fnmatch import fnmatch
from functools import lru_cache

from termgrade.sandbox.overlay_diff import LowerView

__all__ = ["AWK_LIBRARY_DIRS", "GIT_STATE_NAMES", "MAKEFILE_NAMES", "awk_shadow",
           "forget_lookup_order", "git_state", "image_git_dir", "image_makefile",
           "lookup_suspect", "make_shadow", "makefile_near"]

MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")
"""The names GNU make tries in its directory, in its order (``make -C DIR``)."""
AWK_LIBRARY_DIRS = ("/usr/share/awk", "/usr/local/share/awk")
"""gawk's built-in ``AWKPATH`` after ``.`` (Debian's ``/usr/share/awk``; a locally built
gawk's ``/usr/local/share/awk``)."""
AWK_EXTENSION_DIRS = ("/usr/lib/x86_64-linux-gnu/gawk", "/usr/lib/aarch64-linux-gnu/gawk",
                      "/usr/local/lib/gawk")
"""gawk's built-in ``AWKLIBPATH`` (where ``@load`` looks)."""
GIT_STATE_NAMES = frozenset({"packed-refs", "shallow", "commondir", "grafts", "alternates",
                             "http-alternates", "commit-graph", "attributes", "HEAD",
                             "FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD",
                             "REVERT_HEAD", "BISECT_HEAD", "config.worktree", "gitdir"})
_GIT_PARTS = frozenset({"refs", "objects", "info", "hooks", "worktrees", "logs"})
MAX_MAKEFILE_BYTES = 1 << 20
_GIT_TRANSIENT = re.compile(r"\.lock$|(?:^|/)tmp_(?:obj|pack|idx)_[^/]*$|^objects/incoming-")
"""git's own transient files: a lock (``index.lock``, ``HEAD.lock``: written, then renamed
over its target or removed) and an object or pack being written (renamed into place before
any read). git never reads one as the repository's state."""
_LOOSE = re.compile(r"^objects/[0-9a-f]{2}/(?:[0-9a-f]{38}|[0-9a-f]{62})$")
"""A loose object: read only for its own name, and only where no pack of the image has
that object (git searches packs first); new ones are what an honest commit adds."""
_GIT_WORK_FILES = frozenset({"COMMIT_EDITMSG", "FETCH_HEAD", "ORIG_HEAD", "description"})
"""What an honest commit, fetch or reset leaves in a git directory, which git never reads
in place of the image's objects or history. A new branch or tag is not among them: `git
log --all` lists a branch's commits (a future-dated one first) and a tag shadows a branch
of the same name (`release` is `refs/tags/release` before `refs/heads/release`)."""
_INCLUDE = re.compile(r"^[ \t]*(?:-include|sinclude|include)[ \t]+(.*)$", re.MULTILINE)
_GIT_WHY = (
    ("refs/replace/", "a replace ref: every read of the replaced object returns the "
                      "replacement's bytes"),
    ("info/grafts", "grafts: the parents git gives the image's commits"),
    ("shallow", "a shallow list: git stops the image's history at these commits"),
    ("objects/info/commit-graph", "a commit graph: git reads the image's commits' parents "
                                  "from it"),
    ("objects/info/alternates", "an alternates list: more objects git reads as the "
                                "repository's"),
    ("objects/info/http-alternates", "an alternates list"),
    ("commondir", "a common directory: git reads objects and refs from elsewhere"),
    ("objects/pack/", "a pack: git looks objects up in packs before loose objects"),
    ("packed-refs", "packed refs: refs git adds to the image's (replace refs included)"),
    ("refs/tags/", "a tag: `git show NAME` finds it before a branch of that name, and "
                   "`git log --all` lists it"),
    ("refs/", "a ref: `git log --all`, `git describe` and ref lookups see it"),
    ("hooks/", "a hook: git runs it in the tests' own git commands, in the image's work "
               "tree"),
    ("info/attributes", "attributes: how git converts, diffs and archives the image's "
                        "files"),
)


def lookup_suspect(path: str) -> bool:
    """Could ``path`` be read by one of these lookups (by its name alone: the review's
    fast path for a plain directory asks this before reading the image)?"""
    name = posixpath.basename(path)
    return (name in MAKEFILE_NAMES or name.endswith(".awk") or name in GIT_STATE_NAMES
            or "/.git/" in path or any(p in _GIT_PARTS for p in path.split("/")[1:-1]))


def image_makefile(directory: str, lower: LowerView) -> str | None:
    """The makefile GNU make reads in ``directory`` of the image (the first of
    :data:`MAKEFILE_NAMES` it has as a file or link), or None."""
    return _image_makefile(directory, tuple(lower.lower_dirs))


@lru_cache(maxsize=4096)
def _image_makefile(directory: str, layers: tuple[str, ...]) -> str | None:
    lower = LowerView(list(layers))
    for name in MAKEFILE_NAMES:
        found = lower.lstat(f"{directory.rstrip('/')}/{name}")
        if found is not None and not stat.S_ISDIR(found.st_mode):
            return f"{directory.rstrip('/')}/{name}"
    return None


@lru_cache(maxsize=1024)
def _included(makefile: str, layers: tuple[str, ...]) -> tuple[str, ...]:
    """The literal names (or glob patterns) the image's ``makefile`` includes, relative
    to its directory (a word holding a variable is no name the review can know)."""
    text = LowerView(list(layers)).text(makefile, MAX_MAKEFILE_BYTES).replace("\\\n", " ")
    words: list[str] = []
    for match in _INCLUDE.finditer(text):
        for word in match.group(1).split("#", 1)[0].split():
            if "$" not in word and not word.startswith("/"):
                words.append(posixpath.normpath(word))
    return tuple(words)


def make_shadow(path: str, lower: LowerView, changes_at: Callable[[str], bool]) -> str | None:
    """Why a created file in a directory of the image's makefile would be read by make in
    its place or on top of it, or None: a name make tries before it there
    (``GNUmakefile`` before ``makefile`` before ``Makefile``), or a name it ``include``\\ s
    (``-include local.mk``, a glob ``-include *.mk``). ``changes_at(image makefile)``: the
    task carries changes to that makefile itself (the agent may edit it: no stand-in)."""
    if lower.lstat(path) is not None:
        return None  # the image's own file changed: the transfer set's
    directory, name = posixpath.split(path)
    layers = tuple(lower.lower_dirs)
    makefile = _image_makefile(directory, layers)
    if name in MAKEFILE_NAMES:
        # make's directory is the file's own; a created makefile in a new one is new
        if makefile is not None and MAKEFILE_NAMES.index(name) < MAKEFILE_NAMES.index(
                posixpath.basename(makefile)) and not changes_at(makefile):
            return (f"a `{name}`, which GNU make reads in place of the image's {makefile} "
                    "(it tries GNUmakefile, makefile, Makefile in that order)")
        return None
    # an include names a path relative to make's directory: this one or the one above
    for here in _near(directory):
        found = _image_makefile(here, layers)
        if found is None or changes_at(found):
            continue
        relative = posixpath.relpath(path, here)
        for word in _included(found, layers):
            if word == relative or (any(c in word for c in "*?[") and fnmatch(relative, word)):
                return (f"`{word}`, which the image's {found} includes: make reads it on "
                        "top of that makefile")
    return None


def _near(directory: str) -> tuple[str, ...]:
    """The directories whose makefile may include a file in ``directory`` by a relative
    name the review judges: its own, and the one above (``include conf/local.mk``)."""
    above = posixpath.dirname(directory)
    return (directory,) if above == directory else (directory, above)


def makefile_near(directory: str, lower: LowerView) -> bool:
    """Does the image have a makefile in ``directory`` or the one above it (a new file
    there may be one make reads)? Cached: the review asks once per directory."""
    layers = tuple(lower.lower_dirs)
    return any(_image_makefile(d, layers) is not None for d in _near(directory))


def image_git_dir(path: str, lower: LowerView) -> str | None:
    """The image's git directory ``path`` lies in (one holding ``HEAD``, ``objects/`` and
    ``refs/`` in the image: a work tree's ``.git``, a bare repository), or None."""
    layers = tuple(lower.lower_dirs)
    here = posixpath.dirname(path)
    while here not in ("/", ""):
        if _is_git_dir(here, layers):
            return here
        here = posixpath.dirname(here)
    return None


@lru_cache(maxsize=8192)
def _is_git_dir(directory: str, layers: tuple[str, ...]) -> bool:
    lower = LowerView(list(layers))
    head, objects, refs = (lower.lstat(f"{directory}/{n}") for n in ("HEAD", "objects", "refs"))
    return (head is not None and not stat.S_ISDIR(head.st_mode)
            and objects is not None and stat.S_ISDIR(objects.st_mode)
            and refs is not None and stat.S_ISDIR(refs.st_mode))


def git_state(path: str, lower: LowerView) -> str | None:
    """Why a created entry inside an image git directory changes what git computes from
    the image's repository, or None: anything git reads there but a new loose object
    (what a commit adds, read only under its own name once a ref leads to it)."""
    if lower.lstat(path) is not None:
        return None
    git_dir = image_git_dir(path, lower)
    if git_dir is None:
        return None
    relative = path[len(git_dir) + 1:]
    bare = posixpath.basename(git_dir) != ".git"
    if _LOOSE.match(relative) or relative.endswith(".sample") or relative.startswith("logs/") \
            or relative in _GIT_WORK_FILES or (bare and relative.startswith("hooks/")) \
            or _GIT_TRANSIENT.search(relative):
        # a reflog is read only for `@{n}` (what a test's own commit writes, too); a hook of
        # a bare repository is the agent's program, run by a push (agent code while the
        # tests run, judged so), with no work tree of the image's to rewrite
        return None
    why = next((w for prefix, w in _GIT_WHY
                if relative == prefix or (prefix.endswith("/") and relative.startswith(prefix))),
               "git state git reads with the repository")
    return (f"{why} (in the image's git directory {git_dir}, where the task asks for no "
            "changes)")


def awk_shadow(path: str, lower: LowerView, *, changes: bool = False) -> str | None:
    """Why a created ``NAME.awk`` would be what gawk's ``@include "NAME"`` or ``-i NAME``
    loads in place of the image's library file of that name, or None: ``AWKPATH`` starts
    with ``.``, so any directory a test runs gawk in comes first. ``changes``: the task
    carries changes here (the agent's project): judged only beside an image awk program
    (``*.awk``), which a test may run there."""
    directory, name = posixpath.split(path)
    if lower.lstat(path) is not None:
        return None
    if directory in AWK_LIBRARY_DIRS and not name.endswith(".awk") \
            and lower.lstat(f"{directory}/{name}.awk") is not None:
        return (f"named like the image's gawk library file {directory}/{name}.awk without "
                "its suffix: gawk's `@include` tries the exact name first (round 19)")
    if directory in AWK_EXTENSION_DIRS and not name.endswith(".so") \
            and lower.lstat(f"{directory}/{name}.so") is not None:
        return (f"named like the image's gawk extension {directory}/{name}.so without its "
                "suffix: gawk's `@load` tries the exact name first (round 19)")
    if not name.endswith(".awk") or directory in AWK_LIBRARY_DIRS:
        return None
    if changes and not any(n.endswith(".awk") for n in lower.listdir(directory)):
        return None
    for library in AWK_LIBRARY_DIRS:
        if lower.lstat(f"{library}/{name}") is not None:
            return (f"named like the image's gawk library file {library}/{name}: gawk's "
                    "`@include` and `-i` look in the working directory first (AWKPATH "
                    "`.:/usr/share/awk`)")
    return None


def forget_lookup_order() -> None:
    """Drop what was read of the images (a test's fresh layers)."""
    for cached in (_image_makefile, _included, _is_git_dir):
        cached.cache_clear()
