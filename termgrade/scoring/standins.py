"""What, inside the transfer set, would stand in for the verifier: a finding.

The transfer set carries the agent's deliverables into the scoring container, whose
every other byte is the image's. A deliverable may not replace what the verifier's own
processes load by name: an executable that shadows an image tool on ``PATH`` (unless the
task asked for a file at that very path), a file with the name of one of the image's
shared libraries where the loader looks, an NSS or OpenSSL module the image lacks (or a
configuration that names one), a Python start-up file beside the verifier's interpreters.
Each check looks at one entry's name and, for the few that need it, the image's layers.
"""

from __future__ import annotations

import glob
import os
import posixpath
import re
import stat
import sys
from fnmatch import fnmatch
from functools import lru_cache

from termgrade.sandbox.overlay_diff import LowerView, UpperEntry
from termgrade.scoring.policy import GradingPolicy
from termgrade.scoring.toolenv import ToolEnv
from termgrade.task import CONTAINER

__all__ = [
    "LOADER_SEARCHED",
    "PYTEST_CONFIGS",
    "SEARCH_PATHS",
    "carried_link",
    "is_shared_object",
    "link_target_in_b",
    "stands_in",
    "suspect_name",
]

LOADER_SEARCHED = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib",
                   "/usr/lib64", "/usr/local/lib", "/lib", "/lib64",
                   "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu")
"""Where the image's shared libraries live (the loader's trusted and configured dirs)."""
_LOADER_PREFIXES = tuple(f"{d}/" for d in LOADER_SEARCHED)
_SHARED_OBJECT = re.compile(r"\.so(\.\d+)*$")
_NSS_BUILTIN = frozenset({"files", "dns"})
"""Sources glibc serves without loading a module of that name."""
_NSS_LINE = re.compile(r"^\s*([A-Za-z_]+)\s*:\s*(.*)$")
_SSL_PATH = re.compile(r"^\s*(?:module|dynamic_path|\.include|MODULESDIR|ENGINESDIR)\s*=?\s*"
                       r"(\S+)", re.MULTILINE)
MAX_CONFIG_BYTES = 1 << 20
PYTEST_CONFIGS = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml",
                            "tox.ini", "setup.cfg"})
"""Files pytest reads as configuration or code in a directory above the tests."""
TESTS_ANCESTORS = ("/",)
"""The directories above ``/tests`` (pytest's rootdir search and conftest collection walk
up to them): a pytest configuration or conftest there runs in the verifier's pytest."""
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
_SEARCH_PREFIXES = ("/etc/perl/", "/usr/local/", "/usr/lib/", "/usr/share/", "/usr/include/")
STARTUP_NAMES = frozenset({".bash_profile", ".bash_login", ".profile", ".bashrc",
                           ".bash_logout", ".zshenv", ".zprofile", ".zshrc", ".zlogin",
                           ".pam_environment", ".inputrc"})
"""Start-up files a shell or PAM reads from a home directory (any home: a user's may lie
anywhere)."""
STARTUP_PATHS = ("/etc/profile", "/etc/bash.bashrc", "/etc/environment", "/etc/zsh/",
                 "/etc/profile.d/", "/etc/security/pam_env.conf", "/etc/inputrc")
"""System-wide start-up files (a path, or a directory ending in ``/``)."""
TOOL_CONFIG_NAMES = frozenset({".gitconfig", ".gitattributes", ".magic", ".magic.mgc", ".jq",
                               ".curlrc", ".wgetrc", ".netrc", ".npmrc", ".pydistutils.cfg",
                               ".perldb", ".sqliterc", ".psqlrc", ".my.cnf", ".editrc"})
"""Configuration a tool the tests run by name reads from a home directory unasked (git's
hooks, fsmonitor, filters and pager; file(1)'s magic; curl's and wget's defaults)."""
TOOL_CONFIG_PATHS = ("/etc/gitconfig", "/etc/gitattributes", "/etc/magic", "/etc/curlrc",
                     "/usr/share/git-core/", "/usr/lib/git-core/", "/usr/lib/gcc/",
                     "/usr/libexec/gcc/", "/usr/lib/gcc-cross/", "/etc/default/locale",
                     "/etc/wgetrc", "/usr/lib/locale/", "/usr/lib/x86_64-linux-gnu/gconv/",
                     "/usr/lib/aarch64-linux-gnu/gconv/", "/etc/sqliterc",
                     "/etc/ld.so.preload", "/etc/pip.conf", "/etc/xdg/pip/", "/etc/uv/",
                     "/etc/xdg/uv/")
"""System-wide configuration and data the image's tools and libc read unasked (git's
system config, the magic file, a locale archive glibc reads before ``C.utf8``, iconv's
modules, pip's and uv's: what a test-time ``pip install`` installs from), a path or a
directory ending in ``/``."""
_CONFIG_DIRS = ("/.config/git/", "/.config/pip/", "/.pip/", "/.config/uv/")
MAKE_INCLUDE_DIRS = ("/usr/local/include", "/usr/gnu/include", "/usr/include")
"""Where make looks for an ``include``d makefile the tests' directory lacks."""
_HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".h++", ".inc", ".def", ".tcc",
                              ".ipp", ".inl", ".modulemap"})
"""Home subdirectories a tool reads its configuration from (``~/.config/git/config``)."""
MAX_LINK_HOPS = 40
TRANSIENT = ("/tmp", "/var/tmp", "/dev/shm", "/run")
"""Where the verifier's own processes make files after B starts (pytest's temporary
directories, sockets): a carried symlink into a path there that B lacks at its start
would read what the tests write."""
TRANSIENT_PREFIXES = tuple(f"{t}/" for t in TRANSIENT)
_MAGIC = re.compile(r"^/proc/[^/]+/(root|cwd|exe|fd|fdinfo|map_files|task|environ)(/|$)"
                    r"|^/dev/fd(/|$)")
"""Paths through the kernel's per-process magic links: where they lead depends on who
reads them (``/proc/self/cwd`` is ``/tests`` for a test)."""
_STANDARD_STREAMS = frozenset({"/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2",
                               "/dev/fd/0", "/dev/fd/1", "/dev/fd/2"})
"""A log written to the reader's standard streams (``/dev/stdout``) is no read of anyone's
files."""


def is_shared_object(name: str) -> bool:
    """Is ``name`` a shared object's file name (``libz.so``, ``libz.so.1.2.13``)?"""
    return bool(_SHARED_OBJECT.search(name))


def suspect_name(path: str) -> bool:
    """Could this file stand in for part of the verifier (checked even in a plain
    directory)?"""
    name = posixpath.basename(path)
    return (name in ("pyvenv.cfg", "nsswitch.conf") or name.endswith(".cnf")
            or name in PYTEST_CONFIGS or path.startswith(_SEARCH_PREFIXES)
            or name in STARTUP_NAMES or path.startswith(STARTUP_PATHS)
            or name in TOOL_CONFIG_NAMES or path.startswith(TOOL_CONFIG_PATHS)
            or path.startswith(_SYSTEM_PREFIXES)
            or name.endswith(("._pth", ".py", ".pyc")) or name == "pybuilddir.txt"
            or any(d in path for d in _CONFIG_DIRS)
            or name in (".git", ".hg", "node_modules", ".node_modules", ".node_libraries")
            or posixpath.dirname(path) in MAKE_INCLUDE_DIRS
            or bool(_SHARED_OBJECT.search(name)) or "/ossl-modules/" in path
            or "/engines-" in path or "/lib/python" in path)


def _image_has_library(lower: LowerView, name: str) -> str | None:
    for directory in LOADER_SEARCHED:
        if lower.lstat(f"{directory}/{name}") is not None:
            return f"{directory}/{name}"
    return None


def _read(host_path: str) -> str:
    try:
        with open(host_path, "rb") as handle:
            return handle.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _nss_sources(text: str) -> set[str]:
    sources = set()
    for line in text.splitlines():
        match = _NSS_LINE.match(line.split("#", 1)[0])
        if match:
            sources.update(re.sub(r"\[[^]]*\]", " ", match.group(2)).split())
    return sources


def _image_text(lower: LowerView, path: str) -> str:
    for layer in lower.lower_dirs:
        host = f"{layer}{path}"
        if os.path.lexists(host):
            return _read(host)
    return ""


def stands_in(entry: UpperEntry, lower: LowerView, policy: GradingPolicy, *,
              asked: bool, named: bool = False, created: bool = False,
              changes: bool = False) -> str | None:
    """Why this carried entry would stand in for the verifier, or None.

    ``asked``: the task asked for a deliverable at this path (instruction, declared
    artifact or the reference solution's footprint), not only read it in its tests.
    ``named``: a text of the task (the tests included) names this very path: a start-up
    file there, in a home the agent made, is what the task checks, not a stand-in.
    ``created``: the agent created it where the task asks for no changes: a directory it
    also made may be a new user's home (``/data/alice``).
    ``changes``: the task asks for the agent's changes here (its working directory...):
    the image's scripts there are the project the agent works on, not the tests' tools.
    """
    if entry.whiteout:
        return None
    path = entry.path
    parent, name = posixpath.split(path)
    if name in (".git", ".hg") and parent in TESTS_ANCESTORS:
        return f"a repository above the tests ({path}): git run in /tests would read it"
    if name == "node_modules" and parent in TESTS_ANCESTORS:
        return f"Node modules above the tests ({path}): a require in /tests finds them first"
    if name in (".node_modules", ".node_libraries") and _in_home(parent):
        return f"Node's per-user module folder ({path}): a require finds it unasked"
    if entry.is_dir:
        return None
    if parent in MAKE_INCLUDE_DIRS and posixpath.splitext(name)[1] not in _HEADER_SUFFIXES \
            and not asked:
        return (f"not a header, in {parent}, where make finds a makefile the tests "
                "`include` and lack")
    if name.endswith("._pth") or name == "pybuilddir.txt":
        return ("a Python path configuration file (CPython reads `<interpreter>._pth` to set "
                "every Python's sys.path)")
    # the tests naming it excuses a start-up file only in a home the agent made (a new
    # user's .profile the tests check), never in root's or the image's own
    named_new = named and lower.lstat(parent) is None
    home = _in_home(parent) or (created and lower.lstat(parent) is None)
    if not (asked or named_new) and ((home and name in STARTUP_NAMES)
                                     or path.startswith(STARTUP_PATHS)) \
            and not _skeleton_copy(entry, lower):
        return ("a shell start-up file the task did not ask for (a login shell the tests "
                "start would run it before the command they trust)")
    read_by = policy.tool_env.read_unasked(path)
    if read_by and not (asked or named):
        return f"read on start by {read_by}, which the task did not ask for"
    if not (asked or named) and ((home and name in TOOL_CONFIG_NAMES)
                                 or _image_tool_path(path, lower)
                                 or _in_home_config(path)):
        return ("configuration or data an image tool reads unasked (git, the compiler's "
                "own tree, file, curl, the locale or iconv modules), which the task did not "
                "ask for")
    if name in PYTEST_CONFIGS and parent in TESTS_ANCESTORS:
        return f"pytest reads {path} (above the tests) as its configuration or code"
    if path.startswith(_SEARCH_PREFIXES) or policy.tool_env.under_search(path):
        shadowed = _shadowed_in_search_path(path, lower, policy.tool_env)
        if shadowed:
            return shadowed
    link = stat.S_ISLNK(entry.mode)
    if parent in policy.path_dirs and (link or entry.mode & 0o111) and not asked:
        for directory in policy.path_dirs:
            if lower.lstat(f"{directory}/{name}") is not None:
                return (f"shadows the image's `{name}` ({directory}/{name}) on PATH, which "
                        "the task did not ask for")
    if _SHARED_OBJECT.search(name):
        if name.startswith("libnss_") and path.startswith(_LOADER_PREFIXES) \
                and _image_has_library(lower, name) is None:
            return "an NSS module the image lacks"
        if "/ossl-modules/" in path or "/engines-" in path:
            return "an OpenSSL module (provider or engine)"
        image = _image_has_library(lower, name)
        if image is not None and path.startswith(_LOADER_PREFIXES):
            # where the loader searches by name; a bundle elsewhere (a PyInstaller or conda
            # tree in /app) takes an image soname only through ld.so.conf.d, which the
            # grader's ldconfig then shows (termgrade.scoring.loader: a finding)
            return f"has the name of the image's shared library {image}"
    if name == "pyvenv.cfg" and (parent in policy.path_dirs or any(
            posixpath.dirname(d) == parent for d in policy.path_dirs)):
        return "a Python start-up file beside the verifier's interpreters"
    if any(path.startswith(f"{d}/lib/python") for d in policy.path_dirs):
        return "a Python standard library beside the verifier's interpreters"
    if path == "/etc/nsswitch.conf" and not link:
        known = _NSS_BUILTIN | _nss_sources(_image_text(lower, path))
        for source in sorted(_nss_sources(_read(entry.host_path)) - known):
            if _image_has_library(lower, f"libnss_{source}.so.2") is None:
                return f"names the NSS module `{source}`, which the image lacks"
    if name.endswith(".cnf") and not link:
        for target in _SSL_PATH.findall(_read(entry.host_path)):
            clean = target.strip("\"'")
            if clean.startswith("/") and lower.lstat(clean) is None:
                return f"an OpenSSL configuration that loads {clean}, which the image lacks"
    if not asked and path.startswith(_SYSTEM_PREFIXES) and parent not in policy.path_dirs:
        shadowed = toolchain_shadow(path, entry.mode, lower)
        if shadowed:
            return shadowed
    if not (asked or changes):
        return beside_image_script(path, lower)
    return None


_MODULE_FILE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.py|\.pyc|(?:\.[A-Za-z0-9_-]+)?\.so)$")
_PYTHON_SITE_DIRS = ("/usr/lib/python3/dist-packages", "/usr/local/lib/python3*/dist-packages",
                     "/usr/local/lib/python3*/site-packages", "/usr/lib/python3*/site-packages")
MAX_SCRIPT_HEAD = 256


def beside_image_script(path: str, lower: LowerView) -> str | None:
    """Why a created Python module (``hashlib.py``, ``hashlib/__init__.py``, an extension
    module) with the name of one the image's Python imports (the standard library's or
    an installed package's) stands in for it: it lies in a directory that holds an image
    Python script, and Python puts a script's own directory first on ``sys.path``, so an
    image checker or tool run there imports the agent's module. None otherwise."""
    parent, name = posixpath.split(path)
    match = _MODULE_FILE.match(name)
    if name == "__init__.py":
        parent, module = posixpath.split(parent)
    elif match:
        module = match.group(1)
    else:
        return None
    if module not in _image_module_names(tuple(lower.lower_dirs)):
        return None
    script = _image_python_script(parent, tuple(lower.lower_dirs))
    if script is None:
        return None
    return (f"a Python module named like the image's `{module}`, beside the image's Python "
            f"script {script} (Python puts a script's directory first on sys.path)")


@lru_cache(maxsize=16)
def _image_module_names(layers: tuple[str, ...]) -> frozenset[str]:
    """Top-level modules the image's Pythons import: the standard library's, and what its
    site directories hold."""
    lower = LowerView(list(layers))
    names = set(sys.stdlib_module_names)
    for pattern in _PYTHON_SITE_DIRS:
        for directory in _expand(pattern, lower):
            for entry in lower.listdir(directory):
                stem = entry.split(".", 1)[0] if entry.endswith((".py", ".so")) else entry
                if stem.isidentifier():
                    names.add(stem)
    return frozenset(names)


@lru_cache(maxsize=1024)
def _image_python_script(directory: str, layers: tuple[str, ...]) -> str | None:
    """An image file in ``directory`` that Python runs as a script (a ``.py`` file, or an
    executable whose ``#!`` line names python), or None."""
    lower = LowerView(list(layers))
    for name in sorted(lower.listdir(directory)):
        path = f"{directory.rstrip('/')}/{name}"
        seen = lower.lstat(path)
        if seen is None or not stat.S_ISREG(seen.st_mode):
            continue
        if name.endswith(".py"):
            return path
        if seen.st_mode & 0o111:
            host = next((f"{layer}{path}" for layer in layers
                         if os.path.lexists(f"{layer}{path}")), None)
            try:
                with open(host or "/nonexistent", "rb") as handle:
                    head = handle.read(MAX_SCRIPT_HEAD)
            except OSError:
                continue
            if head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]:
                return path
    return None


_SYSTEM_PREFIXES = ("/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/bin/", "/sbin/")
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


def _image_tool_path(path: str, lower: LowerView) -> bool:
    """Is ``path`` under one of :data:`TOOL_CONFIG_PATHS` that the image has (a tool of the
    image's reads it)? A toolchain the agent installs whole, where the image had none
    (``apt install build-essential``), is its own work."""
    for tool in TOOL_CONFIG_PATHS:
        if path.startswith(tool) or path == tool.rstrip("/"):
            top = tool.rstrip("/") if tool.endswith("/") else posixpath.dirname(tool)
            return lower.lstat(top) is not None
    return False


def _in_home(directory: str) -> bool:
    """Is ``directory`` a home (root's, ``/home/<user>``, or ``/``)?"""
    return directory in ("/root", "/") or (
        directory.startswith("/home/") and directory.count("/") == 2)


def _in_home_config(path: str) -> bool:
    """Is ``path`` under a home's ``.config/git/`` (git reads it unasked), or pip's or
    uv's configuration directory (what a test-time ``pip install`` installs from)?"""
    for home in ("/root/", "/home/"):
        if path.startswith(home):
            rest = path[len(home):] if home == "/root/" else path[len(home):].partition("/")[2]
            return rest.startswith((".config/git/", ".config/pip/", ".pip/", ".config/uv/"))
    return False


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
    if posixpath.basename(parent) in ("bin", "sbin") and mode & 0o111 \
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


def _skeleton_copy(entry: UpperEntry, lower: LowerView) -> bool:
    """Is ``entry`` a byte-for-byte copy of the image's ``/etc/skel`` file of that name
    (``useradd -m`` made it)?"""
    if not stat.S_ISREG(entry.mode) or entry.size > MAX_CONFIG_BYTES:
        return False
    skeleton = f"/etc/skel/{posixpath.basename(entry.path)}"
    below = lower.lstat(skeleton)
    if below is None or not stat.S_ISREG(below.st_mode) or below.st_size != entry.size:
        return False
    return _read(entry.host_path) == _image_text(lower, skeleton)


def _pattern_match(pattern: str, path: str) -> bool:
    """Does ``path`` equal ``pattern``, where each ``*`` is exactly one directory name?"""
    parts, names = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(parts) == len(names) and all(
        fnmatch(n, p) for p, n in zip(parts, names, strict=True))


def _expand(pattern: str, lower: LowerView) -> list[str]:
    """The image's directories that ``pattern`` names (each ``*`` one name), in order."""
    return list(_expanded(pattern, tuple(lower.lower_dirs)))


@lru_cache(maxsize=256)
def _expanded(pattern: str, layers: tuple[str, ...]) -> tuple[str, ...]:
    lower = LowerView(list(layers))
    found = ["/"]
    for part in pattern.strip("/").split("/"):
        found = [posixpath.join(d, name) for d in found
                 for name in (sorted(n for n in lower.listdir(d) if fnmatch(n, part))
                              if "*" in part else [part])]
    return tuple(found)


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


def _shadowed_in_search_path(path: str, lower: LowerView,
                             env: ToolEnv = NO_ENV) -> str | None:
    """Why ``path`` shadows an image file in a tool's search path (see
    :data:`SEARCH_PATHS`, and the directories the environment adds:
    :mod:`termgrade.scoring.toolenv`), or None."""
    for kind, (order, judged) in _search_orders(env).items():
        for index, pattern in enumerate(order[:judged]):
            depth = pattern.count("/")
            head = "/".join(path.split("/")[:depth + 1])
            if not _pattern_match(pattern, head) or head == path:
                continue
            relative = path[len(head):]
            if relative.endswith(".pmc"):  # perl loads X.pmc ahead of an X.pm beside it
                for directory in [d for each in order[index:] for d in _expand(each, lower)]:
                    if lower.lstat(directory + relative[:-1]) is not None:
                        return (f"a compiled Perl module that perl loads in place of the "
                                f"image's {directory}{relative[:-1]}")
            for later in order[index + 1:]:
                for directory in _expand(later, lower):
                    if directory != head and lower.lstat(directory + relative) is not None:
                        return (f"shadows the image's {kind} {directory}{relative}, which "
                                f"{head} comes before")
    return None


def _lower_link(lower: LowerView, path: str) -> str | None:
    """The image's symlink target at ``path`` (None: not a symlink in the image)."""
    for layer in lower.lower_dirs:
        host = f"{layer}{path}"
        if os.path.lexists(host):
            try:
                return os.readlink(host)
            except OSError:
                return None
    return None


def _resolve_in_b(start: str, target: str, links: dict[str, str],
                  lower: LowerView) -> list[str]:
    """Every path a symlink at ``start`` pointing to ``target`` passes through in the
    scoring container, last the one it resolves to, component by component as the kernel
    walks it (``..`` after a symlink goes up from where the symlink led): through the
    carried symlinks (``links``: container path -> host path) and the image's own.
    Bounded hops."""
    seen: list[str] = []
    done = "/" if target.startswith("/") else posixpath.dirname(start)
    pending = [p for p in target.split("/") if p not in ("", ".")]
    hops = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            done = posixpath.dirname(done) or "/"
            seen.append(done)
            continue
        here = posixpath.join(done, part)
        seen.append(here)
        link: str | None = None
        if here in links:
            try:
                link = os.readlink(links[here])
            except OSError:
                link = None
        else:
            link = _lower_link(lower, here)
        if link is None:
            done = here
            continue
        hops += 1
        if hops > MAX_LINK_HOPS:  # the kernel gives ELOOP: nothing is read through it
            break
        if link.startswith("/"):
            done = "/"
        pending = [p for p in link.split("/") if p not in ("", ".")] + pending
    return seen


def link_target_in_b(path: str, host_path: str, lower: LowerView,
                     links: dict[str, str]) -> str | None:
    """Where the carried symlink at ``path`` resolves in the scoring container (None:
    unreadable, or a loop)."""
    try:
        target = os.readlink(host_path)
    except OSError:
        return None
    passed = _resolve_in_b(path, target, links, lower)
    return passed[-1] if passed else "/"


def carried_link(path: str, host_path: str, lower: LowerView, links: dict[str, str],
                 carried: set[str] | frozenset[str] = frozenset()) -> str | None:
    """Why the carried symlink at ``path`` is a finding, judged by where it resolves in
    the scoring container (not by its own name), or None: into the grader's paths
    (``/tests``, whose expected outputs an answer symlinked there would be, ``/logs``, the
    run directory), or into a transient directory at a path B lacks at its start (what
    the tests' run writes there). ``carried``: carried entries in transient directories."""
    try:
        target = os.readlink(host_path)
    except OSError:
        return None
    passed = _resolve_in_b(path, target, links, lower)
    grader = tuple(str(p) for p in CONTAINER.grader_owned)
    streams = bool(passed) and passed[-1] in _STANDARD_STREAMS
    for step in passed:
        if any(step == g or step.startswith(g + "/") for g in grader):
            return f"a symlink that resolves into the grader's {step}"
        if _MAGIC.match(step) and not streams:
            return (f"a symlink through {step}, a link the kernel resolves per reader (its "
                    "root, working directory or open files: /tests for a test)")
    final = passed[-1] if passed else "/"
    if final.startswith(TRANSIENT_PREFIXES) and final not in links and final not in carried \
            and lower.lstat(final) is None:
        return (f"a symlink to {final}, which the scoring container lacks at its start "
                "(the tests' run could write it)")
    return None
