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

import os
import posixpath
import re
import stat

from termgrade.sandbox.overlay_diff import LowerView, UpperEntry
from termgrade.scoring.policy import GradingPolicy

__all__ = ["LOADER_SEARCHED", "is_shared_object", "stands_in", "suspect_name"]

LOADER_SEARCHED = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib",
                   "/usr/lib64", "/usr/local/lib", "/lib", "/lib64",
                   "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu")
"""Where the image's shared libraries live (the loader's trusted and configured dirs)."""
_SHARED_OBJECT = re.compile(r"\.so(\.\d+)*$")
_NSS_BUILTIN = frozenset({"files", "dns"})
"""Sources glibc serves without loading a module of that name."""
_NSS_LINE = re.compile(r"^\s*([A-Za-z_]+)\s*:\s*(.*)$")
_SSL_PATH = re.compile(r"^\s*(?:module|dynamic_path|\.include|MODULESDIR|ENGINESDIR)\s*=?\s*"
                       r"(\S+)", re.MULTILINE)
MAX_CONFIG_BYTES = 1 << 20


def is_shared_object(name: str) -> bool:
    """Is ``name`` a shared object's file name (``libz.so``, ``libz.so.1.2.13``)?"""
    return bool(_SHARED_OBJECT.search(name))


def suspect_name(path: str) -> bool:
    """Could this file stand in for part of the verifier (checked even in a plain
    directory)?"""
    name = posixpath.basename(path)
    return (name in ("pyvenv.cfg", "nsswitch.conf") or name.endswith(".cnf")
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
              asked: bool) -> str | None:
    """Why this carried entry would stand in for the verifier, or None.

    ``asked``: the task asked for a deliverable at this path (instruction, declared
    artifact or the reference solution's footprint), not only read it in its tests.
    """
    if entry.is_dir or entry.whiteout:
        return None
    path = entry.path
    parent, name = posixpath.split(path)
    link = stat.S_ISLNK(entry.mode)
    if parent in policy.path_dirs and (link or entry.mode & 0o111) and not asked:
        for directory in policy.path_dirs:
            if lower.lstat(f"{directory}/{name}") is not None:
                return (f"shadows the image's `{name}` ({directory}/{name}) on PATH, which "
                        "the task did not ask for")
    if _SHARED_OBJECT.search(name):
        if name.startswith("libnss_") and _image_has_library(lower, name) is None:
            return "an NSS module the image lacks"
        if "/ossl-modules/" in path or "/engines-" in path:
            return "an OpenSSL module (provider or engine)"
        image = _image_has_library(lower, name)
        if image is not None:  # a loader.d entry could put any directory first
            return f"has the name of the image's shared library {image}"
    if name == "pyvenv.cfg" and (parent in policy.path_dirs or any(
            posixpath.dirname(d) == parent for d in policy.path_dirs)):
        return "a Python start-up file beside the verifier's interpreters"
    if any(path.startswith(f"{d}/lib/python") for d in policy.path_dirs):
        return "a Python standard library beside the verifier's interpreters"
    if name == "nsswitch.conf" and not link:
        known = _NSS_BUILTIN | _nss_sources(_image_text(lower, path))
        for source in sorted(_nss_sources(_read(entry.host_path)) - known):
            if _image_has_library(lower, f"libnss_{source}.so.2") is None:
                return f"names the NSS module `{source}`, which the image lacks"
    if name.endswith(".cnf") and not link:
        for target in _SSL_PATH.findall(_read(entry.host_path)):
            clean = target.strip("\"'")
            if clean.startswith("/") and lower.lstat(clean) is None:
                return f"an OpenSSL configuration that loads {clean}, which the image lacks"
    return None
