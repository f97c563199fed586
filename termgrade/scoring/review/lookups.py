"""Where the image's tools look files up by name, and what a created file there shadows.

The rules :mod:`termgrade.scoring.review.standins` applies to a created file by its kind and
place: a tool's search path (Perl's ``@INC``, the C include path, pkg-config's, Node's
and Ruby's, and the directories test.sh's environment puts first:
:mod:`termgrade.scoring.review.toolenv`), a toolchain's own directories (a compiler's target
``bin``, the linker's directories, a header's path below ``include``), an image ELF file's own
``DT_RUNPATH``/``DT_RPATH`` directories, and the names image shell scripts ``source`` by a
bare name (looked up on PATH first). Each answers why a created file there changes what an
image tool computes, or None (Python's modules are
:mod:`termgrade.scoring.review.python_modules`'). What needs the image's files read (ELF
dynamic sections, shell scripts) comes from one bounded walk per image
(:func:`image_lookups`, cached), made only when a created file needs it.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from termgrade.sandbox.overlay_diff import LowerView
from termgrade.scoring.review.elf import read_dynamic
from termgrade.scoring.review.image_globs import expand_pattern, forget_image_globs, pattern_match
from termgrade.scoring.review.lookup_order import forget_lookup_order
from termgrade.scoring.review.python_modules import forget_python_modules
from termgrade.scoring.review.toolenv import ToolEnv

__all__ = ["NO_ENV", "SEARCH_PATHS", "SYSTEM_PREFIXES", "ImageLookups", "forget_images",
           "image_lookups", "runpath_shadow", "shadowed_in_search_path", "sourced_on_path",
           "toolchain_shadow"]

SEARCH_PATHS: dict[str, tuple[str, ...]] = {
    "Perl module": ("/etc/perl", "/usr/local/lib/*/perl/*", "/usr/local/share/perl/*",
                    "/usr/lib/*/perl5/*", "/usr/share/perl5", "/usr/lib/*/perl-base",
                    "/usr/lib/*/perl/*", "/usr/share/perl/*"),
    "C header": ("/usr/local/include", "/usr/include/*-linux-gnu", "/usr/include"),
    "pkg-config file": ("/usr/local/lib/*-linux-gnu/pkgconfig", "/usr/local/lib/pkgconfig",
                        "/usr/local/share/pkgconfig", "/usr/lib/*-linux-gnu/pkgconfig",
                        "/usr/lib/pkgconfig", "/usr/share/pkgconfig"),
    "Node module": ("/usr/local/lib/node_modules", "/usr/lib/node_modules",
                    "/usr/share/nodejs"),
    "Ruby library": ("/usr/local/lib/site_ruby/*", "/usr/local/lib/*-linux-gnu/site_ruby",
                     "/usr/local/lib/site_ruby", "/usr/lib/ruby/vendor_ruby/*",
                     "/usr/lib/*-linux-gnu/ruby/vendor_ruby/*", "/usr/lib/ruby/vendor_ruby",
                     "/usr/lib/ruby/*", "/usr/lib/*-linux-gnu/ruby/*"),
}
"""Search paths an image tool reads in order (perl's ``@INC``, the C compiler's include
path, pkg-config's, Node's global modules, Ruby's ``$LOAD_PATH``; ``*`` is one directory
name): a file earlier in one that has the relative name of an image file later in it
changes what the image's tool computes."""


_ENV_ONLY_DEFAULTS: dict[str, tuple[str, ...]] = {
    "Python module": ("/usr/lib/python3*", "/usr/local/lib/python3*/dist-packages",
                      "/usr/lib/python3/dist-packages"),
    "linker input": ("/usr/lib/*-linux-gnu", "/lib/*-linux-gnu", "/usr/lib", "/lib"),
}
"""The built-in search path of a kind the stand-in review judges only where the
environment adds directories to it (the verifier's own Python is its closure)."""


NO_ENV = ToolEnv()


SYSTEM_PREFIXES = ("/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/")
"""Where installed software lives: a tool searches its own paths there (gcc its target and
version directories, ``as``, ``ld``, start-up objects), most of which no list names."""


_TOOL_DIRS = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin")


_LINKER_DIRS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                "/lib/aarch64-linux-gnu", "/usr/lib", "/lib", "/usr/lib64", "/lib64")


_INCLUDE_DIRS = ("/usr/local/include", "/usr/include/x86_64-linux-gnu",
                 "/usr/include/aarch64-linux-gnu", "/usr/include")


_OBJECT_SUFFIXES = frozenset({".o", ".a", ".ld", ".lds"})


_OBJECT_NAMES = frozenset({"specs", "libc.so", "libm.so", "libgcc_s.so", "libpthread.so"})


_HEADERS = frozenset({".h", ".hh", ".hpp", ".hxx", ".h++", ".tcc", ".inc"})


def _toolchain_bin(directory: str) -> bool:
    """Is ``directory`` a ``bin`` a compiler searches before ``PATH``: its target
    directory's (``/usr/<triplet>/bin``, ``/usr/local/<triplet>/bin``) or one inside its
    own trees (``/usr/lib/gcc/...``)? Not any ``bin`` of a system tree: a virtual
    environment in ``/usr/local/lib/app`` has a ``bin/python3`` no compiler runs."""
    parts = directory.strip("/").split("/")
    if parts[-1] not in ("bin", "sbin") or parts[0] != "usr":
        return False
    if (len(parts) == 3 or (len(parts) == 4 and parts[1] == "local")) \
            and "-linux-" in parts[-2]:
        return True
    return directory.startswith(_COMPILER_TREES)


_COMPILER_TREES = ("/usr/lib/gcc/", "/usr/lib/gcc-cross/", "/usr/libexec/gcc/",
                   "/usr/local/lib/gcc/", "/usr/local/libexec/gcc/")


def toolchain_shadow(path: str, mode: int, lower: LowerView) -> str | None:
    """Why a created file in a system tree would stand in for what a tool finds there by
    the same relative name before the image's (gcc's target directory
    ``/usr/<triplet>/bin/as``, its version directory ``/usr/lib/<triplet>/12/crt1.o``,
    ``/usr/<triplet>/include/stdio.h``), or None. Judged by the kind of file and where such
    a tool looks, not by every name the image has: a tool in a ``bin`` directory with the
    name of an image tool; an object, start-up file or linker script with the name of one
    in the linker's directories; a header whose path below an ``include`` directory is an
    image header's."""
    parent, name = posixpath.split(path)
    suffix = posixpath.splitext(name)[1]
    if _toolchain_bin(parent) and mode & 0o111 \
            and (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        for directory in _TOOL_DIRS:
            if lower.lstat(f"{directory}/{name}") is not None:
                return (f"has the name of the image's tool {directory}/{name}, in a bin "
                        "directory a tool may search before PATH (a compiler's target "
                        "directory)")
    if suffix in _OBJECT_SUFFIXES or name in _OBJECT_NAMES:
        for directory in _LINKER_DIRS:
            if f"{directory}/{name}" != path and lower.lstat(f"{directory}/{name}") is not None:
                return (f"has the name of the image's {directory}/{name}, which the compiler "
                        "or linker may find in this directory first")
    if suffix in _HEADERS and "/include/" in path:
        relative = path.rsplit("/include/", 1)[1]
        for directory in _INCLUDE_DIRS:
            image = f"{directory}/{relative}"
            if image != path and lower.lstat(image) is not None:
                return (f"has the path of the image's header {image} below an include "
                        "directory a compiler may search first")
    return None


@lru_cache(maxsize=64)
def _search_orders(env: ToolEnv) -> dict[str, tuple[tuple[str, ...], int]]:
    """Each kind's search path: the environment's directories first (escaped: a pattern
    names them), then the tool's built-in ones; and how many of its first directories
    are judged (all of a built-in path; of :data:`_ENV_ONLY_DEFAULTS`, only the
    environment's)."""
    orders = {kind: (order, len(order)) for kind, order in SEARCH_PATHS.items()}
    for kind, dirs in env.search:
        escaped = tuple(glob.escape(d) for d in dirs)
        if kind in orders:
            builtin = orders[kind][0]
            orders[kind] = ((*escaped, *builtin), len(escaped) + len(builtin))
        else:
            orders[kind] = ((*escaped, *_ENV_ONLY_DEFAULTS.get(kind, ())), len(escaped))
    return orders


def shadowed_in_search_path(path: str, lower: LowerView,
                             env: ToolEnv = NO_ENV) -> str | None:
    """Why ``path`` shadows an image file in a tool's search path (see
    :data:`SEARCH_PATHS`, and the directories the environment adds:
    :mod:`termgrade.scoring.review.toolenv`), or None."""
    for kind, (order, judged) in _search_orders(env).items():
        for index, pattern in enumerate(order[:judged]):
            depth = pattern.count("/")
            head = "/".join(path.split("/")[:depth + 1])
            if not pattern_match(pattern, head) or head == path:
                continue
            relative = path[len(head):]
            if relative.endswith(".pmc"):  # perl loads X.pmc ahead of an X.pm beside it
                for directory in [d for each in order[index:] for d in expand_pattern(each, lower)]:
                    if lower.lstat(directory + relative[:-1]) is not None:
                        return (f"a compiled Perl module that perl loads in place of the "
                                f"image's {directory}{relative[:-1]}")
            for later in order[index + 1:]:
                for directory in expand_pattern(later, lower):
                    if directory != head and lower.lstat(directory + relative) is not None:
                        return (f"shadows the image's {kind} {directory}{relative}, which "
                                f"{head} comes before")
    return None


# --- what the image's own binaries and shell scripts look up by name -----------------

_SHARED_NAME = re.compile(r"\.so(\.\d+)*$")
_TOOL_TREES = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin")
_LIBRARY_TREES = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                  "/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib",
                  "/usr/lib64", "/usr/local/lib", "/lib", "/lib64")
_WALKED = ("/opt", "/usr/local", "/srv", "/app", "/usr/libexec", "/etc", "/home", "/root",
           "/usr/lib")
"""Trees walked (after the PATH, tool and library directories themselves), in order, until
the walk's budget runs out: where an image keeps its own programs, checkers and scripts."""
MAX_WALKED = 300_000
"""Directory entries an image walk looks at, at most."""
MAX_READ = 40_000
"""Files read as ELF, at most."""
MAX_SCRIPTS = 4_000
"""Shell scripts read, at most."""
MAX_SCRIPT_BYTES = 1 << 19
"""Bytes of a script read (an executable larger than this is no script read)."""
_HEAD = 64
_SHELLS = frozenset({"sh", "bash", "dash", "ksh", "zsh", "mksh", "ash", "busybox"})
_SOURCE = re.compile(
    r"""(?:^|[;&|({`])[ \t]*(?:(?:then|do|else|if|elif|while|until|builtin|command|!)"""
    r"""[ \t]+)*(?:source|\.)[ \t]+(["']?)([^\s;&|()<>"'`$/\\#=]+)\1(?=[\s;&|)<>`]|$)""")
"""``source NAME`` or ``. NAME`` as a command, with a literal NAME holding no ``/``."""
_COMMENT = re.compile(r"(?:^|\s)#.*")
_HEREDOC = re.compile(r"<<-?[ \t]*([\"']?)([A-Za-z_][A-Za-z0-9_]*)\1")
_LEGACY_HWCAPS = frozenset({"tls", "x86_64", "haswell", "avx512_1", "i686", "sse2",
                            "aarch64", "atomics", "asimd"})


@dataclass(frozen=True)
class ImageLookups:
    """What the image's own programs look up by name outside the known search paths."""

    runpaths: dict[str, tuple[str, ...]]
    """Each ``DT_RUNPATH``/``DT_RPATH`` directory of an image ELF file (``$ORIGIN``
    expanded), and some of the image's files that search it."""
    shared_names: frozenset[str]
    """The file names of the image's shared objects (``libm.so.6``) the walk saw."""
    sourced: dict[str, str]
    """Each name an image shell script sources by a bare name (``source common.sh``: bash
    and dash look it up on PATH first), and one such script."""


def image_lookups(lower: LowerView, path_dirs: tuple[str, ...] = ()) -> ImageLookups:
    """The image's :class:`ImageLookups`, each part computed once per image and PATH (the
    rules ask only for the part they need: the walk lists, the ELF files and the scripts
    are read only when a created file calls for them)."""
    key = (tuple(lower.lower_dirs), tuple(path_dirs))
    return ImageLookups(_image_runpaths(*key), _image_listing(*key)[1], _image_sourced(*key))


def forget_images() -> None:
    """Drop what was read of the images (a test's fresh layers)."""
    for cached in (_image_listing, _image_runpaths, _image_sourced):
        cached.cache_clear()
    forget_image_globs()
    forget_python_modules()
    forget_lookup_order()


_Candidate = tuple[str, str, int, int]
"""(image path, host path, mode, size) of an image file that may be ELF or a script."""


@lru_cache(maxsize=8)
def _image_listing(layers: tuple[str, ...], path_dirs: tuple[str, ...]
                   ) -> tuple[tuple[_Candidate, ...], frozenset[str]]:
    """One bounded walk of the image, reading no file: the regular files that may be ELF
    (a shared object's name, or executable) or shell scripts (``.sh``, or executable),
    and the names of its shared objects."""
    candidates: list[_Candidate] = []
    shared: set[str] = set()
    budget = {"walked": MAX_WALKED}
    seen: set[str] = set()
    flat = tuple(dict.fromkeys((*path_dirs, *_TOOL_TREES, *_LIBRARY_TREES)))
    for top, deep in [*((d, False) for d in flat), *((d, True) for d in _WALKED)]:
        for path, host, mode, size in _image_files(layers, top, deep, seen, budget):
            name = posixpath.basename(path)
            shared_name = bool(_SHARED_NAME.search(name))
            if shared_name:
                shared.add(name)
            if stat.S_ISREG(mode) and (shared_name or mode & 0o111
                                       or name.endswith((".sh", ".bash"))):
                candidates.append((path, host, mode, size))
    return tuple(candidates), frozenset(shared)


@lru_cache(maxsize=8)
def _image_runpaths(layers: tuple[str, ...], path_dirs: tuple[str, ...]
                    ) -> dict[str, tuple[str, ...]]:
    """Each RUNPATH/RPATH directory of the image's ELF files, and some files searching it."""
    runpaths: dict[str, list[str]] = {}
    for path, host, _mode, _size in _image_listing(layers, path_dirs)[0][:MAX_READ]:
        _note_elf(path, host, runpaths)
    return {d: tuple(f) for d, f in runpaths.items()}


@lru_cache(maxsize=8)
def _image_sourced(layers: tuple[str, ...], path_dirs: tuple[str, ...]) -> dict[str, str]:
    """Each name an image shell script sources by a bare name, and one such script."""
    sourced: dict[str, str] = {}
    scripts = 0
    for path, host, mode, size in _image_listing(layers, path_dirs)[0]:
        if scripts >= MAX_SCRIPTS:
            break
        if not path.endswith((".sh", ".bash")):
            if not mode & 0o111 or size > MAX_SCRIPT_BYTES:
                continue
            try:
                with open(host, "rb") as handle:
                    if not _shell_line(handle.read(_HEAD)):
                        continue
            except OSError:
                continue
        scripts += 1
        for each in _sourced_names(host):
            sourced.setdefault(each, path)
    return sourced


def _image_files(layers: tuple[str, ...], top: str, deep: bool, seen: set[str],
                 budget: dict[str, int]) -> Iterator[tuple[str, str, int, int]]:
    """(image path, host path, mode, size) of each file below ``top`` (all of its tree when
    ``deep``), top layer first, each path once (``seen``: files, and the directories a
    deep walk entered); symlinked directories not followed."""
    top = top.rstrip("/") or "/"
    if deep:
        if f"{top}/" in seen:
            return
        seen.add(f"{top}/")
    stack = [top]
    while stack:
        directory = stack.pop()
        for layer in layers:
            try:
                entries = list(os.scandir(f"{layer}{directory}"))
            except OSError:
                continue
            for entry in entries:
                budget["walked"] -= 1
                if budget["walked"] < 0:
                    return
                path = f"{directory.rstrip('/')}/{entry.name}"
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if deep and f"{path}/" not in seen:
                        seen.add(f"{path}/")
                        stack.append(path)
                    continue
                if path in seen:
                    continue
                seen.add(path)
                try:
                    seen_stat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield path, entry.path, seen_stat.st_mode, seen_stat.st_size


def _note_elf(path: str, host: str, runpaths: dict[str, list[str]]) -> None:
    dynamic = read_dynamic(host)
    if dynamic is None:
        return
    origin = posixpath.dirname(path)
    for entry in (*dynamic.runpath, *dynamic.rpath):
        for directory in _expand_dst(entry, origin):
            users = runpaths.setdefault(directory, [])
            if len(users) < 4:
                users.append(path)


def _expand_dst(entry: str, origin: str) -> list[str]:
    """The directories a RUNPATH/RPATH entry names (the loader's ``$ORIGIN``, ``$LIB``,
    ``$PLATFORM``); a relative entry (the working directory's) is none the review knows."""
    variants = [entry.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)]
    for token, values in (("LIB", ("lib", "lib64", "lib/x86_64-linux-gnu",
                                   "lib/aarch64-linux-gnu")),
                          ("PLATFORM", ("x86_64", "aarch64", "haswell", "xeon_phi"))):
        if f"${token}" in variants[0] or f"${{{token}}}" in variants[0]:
            variants = [v.replace(f"${{{token}}}", value).replace(f"${token}", value)
                        for v in variants for value in values]
    return [posixpath.normpath(v) for v in variants if v.startswith("/") and "$" not in v]


def _shell_line(head: bytes) -> bool:
    """Does ``head`` start with a ``#!`` line naming a shell (``/bin/sh``, ``env bash``)?"""
    if not head.startswith(b"#!"):
        return False
    words = head[2:].split(b"\n", 1)[0].decode("latin-1").split()
    if not words:
        return False
    program = posixpath.basename(words[0])
    if program == "env":
        program = next((w for w in words[1:] if not w.startswith("-")), "")
    return posixpath.basename(program) in _SHELLS


def _sourced_names(host: str) -> set[str]:
    """The literal, slash-less names a shell script sources (``source common.sh``, ``.
    lib.sh``, after ``;``, ``&&``, ``then``...), read line by line by a pattern: comments
    and here-documents' text are no commands."""
    try:
        with open(host, "rb") as handle:
            text = handle.read(MAX_SCRIPT_BYTES).decode("utf-8", "replace")
    except OSError:
        return set()
    if "source" not in text and ". " not in text and ".\t" not in text:
        return set()
    found: set[str] = set()
    ending: str | None = None
    for line in text.splitlines():
        if ending is not None:
            if line.strip() == ending:
                ending = None
            continue
        code = _COMMENT.sub("", line)
        found.update(m.group(2) for m in _SOURCE.finditer(code))
        heredoc = _HEREDOC.search(code)
        if heredoc:
            ending = heredoc.group(2)
    return found


def runpath_shadow(path: str, lower: LowerView, path_dirs: tuple[str, ...] = ()) -> str | None:
    """Why a new file with a shared object's name in a directory an image ELF file
    searches first (its ``DT_RUNPATH``/``DT_RPATH``, or their ``glibc-hwcaps`` and legacy
    hardware-capability subdirectories) stands in for a library the image provides
    elsewhere, or None. The image's own binaries only: a program the agent builds with
    an RPATH into its own directory is its work."""
    directory, name = posixpath.split(path)
    if not _SHARED_NAME.search(name) or lower.lstat(path) is not None:
        return None
    candidates = [directory]
    parent, last = posixpath.split(directory)
    if posixpath.basename(parent) == "glibc-hwcaps":
        candidates.append(posixpath.dirname(parent))
    for _ in range(2):
        if last in _LEGACY_HWCAPS:
            candidates.append(parent)
            parent, last = posixpath.split(parent)
        else:
            break
    key = (tuple(lower.lower_dirs), tuple(path_dirs))
    if name not in _image_listing(*key)[1]:
        return None  # a name the image has nowhere: its own library (no file is read)
    runpaths = _image_runpaths(*key)
    for searched in candidates:
        if searched in _LIBRARY_TREES:
            continue  # the loader's own directories: judged by the image's names there
        users = runpaths.get(searched)
        if users:
            return (f"has the name of the image's shared library `{name}`, in {searched}, "
                    f"which the image's {users[0]} searches first (its RUNPATH/RPATH)")
    return None


def sourced_on_path(path: str, lower: LowerView, path_dirs: tuple[str, ...]) -> str | None:
    """Why a new file in a directory of test.sh's PATH stands in for what an image shell
    script sources by a bare name, or None: bash's ``source NAME`` and dash's ``. NAME``
    look NAME up on PATH before (dash: instead of) the working directory."""
    directory, name = posixpath.split(path)
    if directory not in path_dirs or lower.lstat(path) is not None:
        return None
    script = _image_sourced(tuple(lower.lower_dirs), tuple(path_dirs)).get(name)
    if script is None:
        return None
    return (f"named like what the image's {script} sources by a bare name (`source {name}`), "
            f"on PATH, where the shell looks before the script's working directory")
