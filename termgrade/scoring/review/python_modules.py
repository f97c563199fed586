"""Python modules among an image's files: what module a file is a form of, and when a
created file is another form of an image module that Python would import in its place
(:func:`module_form_shadow`: a package, an extension or a bytecode cache beside the
image's source) or a module beside an image Python script that the script would import
(:func:`beside_image_script`: Python puts a script's own directory first on
``sys.path``). The image's directories are read once per image's layers (cached)."""

from __future__ import annotations

import os
import posixpath
import re
import stat
import sys
from functools import lru_cache

from termgrade.sandbox.overlay_diff import LowerView
from termgrade.scoring.review.image_globs import expand_pattern

__all__ = ["beside_image_script", "forget_python_modules", "image_module_names", "module_file",
           "module_form_shadow", "python_forms"]


_EXTENSION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_-]+)?\.so$")
"""An extension module's file name, with any of CPython's suffixes of any version and
ABI (``importlib.machinery.EXTENSION_SUFFIXES``: ``.cpython-311-x86_64-linux-gnu.so``,
``.abi3.so``, ``.so``; PyPy's ``.pypy39-pp73-x86_64-linux-gnu.so``)."""
_CACHED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z0-9_-]+(?:\.opt-[0-9]+)?\.pyc$")
"""A bytecode cache's name in ``__pycache__`` (``rules.cpython-311.pyc``,
``rules.cpython-311.opt-1.pyc``: ``importlib.util.cache_from_source``, any tag)."""


_PYTHON_SITE_DIRS = ("/usr/lib/python3/dist-packages", "/usr/local/lib/python3*/dist-packages",
                     "/usr/local/lib/python3*/site-packages", "/usr/lib/python3*/site-packages",
                     "/opt/*/lib/python3*/site-packages", "/opt/*/*/lib/python3*/site-packages",
                     "/usr/local/*/lib/python3*/site-packages")
"""Site directories of the image's Pythons: the system's, ``/usr/local``'s and virtual
environments' (``/opt/venv``: round 17's ``packaging`` beside a checker)."""


MAX_SCRIPT_HEAD = 256


def module_file(name: str) -> tuple[str, str] | None:
    """The module a file name in a directory is a form of, and the form: ``source``
    (``.py``), ``bytecode`` (a ``.pyc`` beside where its source would be), ``extension``;
    None for any other name. Python's finder tries, in one directory, a package
    (``name/__init__`` in any of these forms), then the extension suffixes, the source,
    the bytecode (``importlib.machinery``'s loaders in order)."""
    if name.endswith(".py"):
        module, form = name[:-3], "source"
    elif name.endswith(".pyc"):
        module, form = name[:-4], "bytecode"
    else:
        match = _EXTENSION.match(name)
        if match is None:
            return None
        module, form = match.group(1), "extension"
    return (module, form) if module.isidentifier() else None


def python_forms(path: str) -> list[tuple[str, str, str]]:
    """What module the file at ``path`` would be a form of, as (directory, module, form):
    ``rules.py`` in ``/d`` is ``rules`` in ``/d``; ``__pycache__/rules.cpython-311.pyc``
    is the ``cached`` form of ``rules`` in its parent (Python loads it in place of the
    source it was compiled from); an ``__init__`` form is both ``__init__`` in its package
    and the ``package`` form of that package in the directory above (a package is found
    ahead of a module of its name)."""
    parent, name = posixpath.split(path)
    if posixpath.basename(parent) == "__pycache__":
        cached = _CACHED.match(name)
        return [(posixpath.dirname(parent), cached.group(1), "cached")] if cached else []
    found = module_file(name)
    if found is None:
        return []
    module, form = found
    forms = [(parent, module, form)]
    if module == "__init__":
        above, package = posixpath.split(parent)
        if package.isidentifier():
            forms.append((above, package, "package"))
    return forms


def beside_image_script(path: str, lower: LowerView) -> str | None:
    """Why a created Python module stands in for one an image Python script imports, or
    None: it lies in a directory that holds an image Python script (Python puts a
    script's own directory first on ``sys.path``), and its name is one the image's Python
    imports (the standard library's, an installed package's). Every form counts
    (:func:`python_forms`): ``hashlib.py``, ``hashlib/__init__.py``,
    ``_hashlib.cpython-311-x86_64-linux-gnu.so``. A bytecode cache is no new module (its
    source must be there); another form of one of the image's modules in that directory
    is :func:`module_form_shadow`'s, as in any directory."""
    forms = [f for f in python_forms(path) if f[2] != "cached" and f[1] != "__init__"]
    if not forms:
        return None
    parent, module, _form = forms[0]
    layers = tuple(lower.lower_dirs)
    script = _image_python_script(parent, layers)
    if script is None:
        return None
    if module not in _image_module_names(layers):
        return None
    return (f"a Python module named like the image's `{module}`, beside the image's Python script "
            f"{script} (Python puts a script's directory first on sys.path)")


_FORM_WHY = {
    "cached": "a bytecode cache of the image's source, which Python loads in its place",
    "package": "a package, which Python finds ahead of a module of its name",
    "extension": "an extension module, which Python tries ahead of source and bytecode",
    "source": "source",
    "bytecode": "bytecode",
}


_RANK = {"package": 0, "extension": 1, "source": 2, "cached": 2, "bytecode": 3,
         "namespace": 4}
"""Python's order among a module's forms in one directory (``FileFinder``: a package,
then the extension suffixes, the source, sourceless bytecode; a namespace package only
when none of them is there). A bytecode cache is the source's stand-in."""


def module_form_shadow(path: str, lower: LowerView, *, created: bool) -> str | None:
    """Why a created file is another form of a Python module the image has in that same
    directory (any directory: the standard library's, a site directory's, a package's, an
    image script's) that Python would import in the image's place, or None:
    ``rules.cpython-311-x86_64-linux-gnu.so`` (any tag) or ``rules/__init__.py`` beside
    the image's ``rules.py``, ``__init__.abi3.so`` in an image package,
    ``__pycache__/rules.cpython-311.pyc`` for the image's ``rules.py``, an ``__init__.py``
    that makes the image's namespace package a regular one. A form Python tries after the
    image's (``rules.pyc`` beside ``rules.py``, ``rules.py`` beside a package ``rules/``)
    is never imported: the agent's to keep.

    A bytecode cache is what any Python run writes (the reference's included): it is
    judged only where the agent ``created`` it in the transfer review (left out, never a
    finding: the scoring container has the source, and Python compiles it again), never
    in the review of what the verifier's own processes wrote."""
    forms = python_forms(path)
    if not forms or lower.lstat(path) is not None:
        return None  # no module's file, or the image's own file changed: no new form
    layers = tuple(lower.lower_dirs)
    for directory, module, form in forms:
        if form == "cached" and not created:
            continue
        if not _image_sibling_module(directory, module, layers):
            continue
        have = _image_module_forms(directory, module, layers)
        if not have:
            continue
        first = min(have, key=_RANK.__getitem__)
        if form == "cached" and first != "source":
            continue  # Python reads a cache only for the source it imports
        if _RANK[form] > _RANK[first] or (form == "package" and first == "package"):
            continue  # tried after the image's (an __init__ in its package: as `__init__`)
        return (f"another form of the image's module `{module}` in {directory} "
                f"({_FORM_WHY[form]}; the image has its {first}): Python would import it "
                "in place of the image's")
    return None


@lru_cache(maxsize=4096)
def _image_names(directory: str, layers: tuple[str, ...]) -> frozenset[str]:
    """The names the image has in ``directory`` (empty: none, or no such directory)."""
    return frozenset(LowerView(list(layers)).listdir(directory))


def _image_sibling_module(directory: str, module: str, layers: tuple[str, ...]) -> bool:
    """Does the image have a module ``module`` in ``directory`` (a ``.py``, a package,
    an extension, bytecode)?"""
    return any(n == module or (n.split(".", 1)[0] == module
                               and (n.endswith((".py", ".pyc")) or bool(_EXTENSION.match(n))))
               for n in _image_names(directory, layers))


@lru_cache(maxsize=4096)
def _image_module_forms(directory: str, module: str,
                        layers: tuple[str, ...]) -> frozenset[str]:
    """The forms in which the image has module ``module`` in ``directory``: ``package``
    (a directory with an ``__init__``), ``namespace`` (a directory of Python files with
    none), ``extension``, ``source``, ``bytecode``."""
    forms = set()
    for name in _image_names(directory, layers):
        found = module_file(name)
        if found is not None and found[0] == module:
            forms.add(found[1])
    if module in _image_names(directory, layers):
        below = [module_file(n) for n in _image_names(f"{directory}/{module}", layers)]
        if any(f is not None and f[0] == "__init__" for f in below):
            forms.add("package")
        elif any(f is not None for f in below):
            forms.add("namespace")
    return frozenset(forms)


def image_module_names(lower: LowerView) -> frozenset[str]:
    """Top-level modules the image's Pythons import (:func:`_image_module_names`)."""
    return _image_module_names(tuple(lower.lower_dirs))


@lru_cache(maxsize=16)
def _image_module_names(layers: tuple[str, ...]) -> frozenset[str]:
    """Top-level modules the image's Pythons import: the standard library's, and what its
    site directories hold."""
    lower = LowerView(list(layers))
    names = set(sys.stdlib_module_names)
    for pattern in _PYTHON_SITE_DIRS:
        for directory in expand_pattern(pattern, lower):
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


def forget_python_modules() -> None:
    """Drop what was read of the images (a test's fresh layers)."""
    for cached in (_image_names, _image_module_forms, _image_module_names,
                   _image_python_script):
        cached.cache_clear()
