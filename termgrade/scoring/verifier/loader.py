"""The loader's cache in the scoring container: the image's, or rebuilt by the grader.

The agent's ``ldconfig`` run in its own container is never carried (it is the image's
cache plus whatever the agent's container held). When the transfer set carries a shared
library or an ``/etc/ld.so.conf.d`` entry (``make install`` into ``/usr/local/lib``, the
fix a shared-library task asks for), the grader runs the image's own ``ldconfig``, by
absolute path, in the scoring container before anything else runs there, and records
the cache it wrote. A cache that differs when the verifier is done (agent code the tests
ran rewrote it) is a finding.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass, field

from termgrade.sandbox.base import Sandbox
from termgrade.sandbox.errors import SandboxError
from termgrade.sandbox.overlay_diff import UpperEntry
from termgrade.scoring.review.standins import is_shared_object

__all__ = ["CACHE", "LDCONFIGS", "CacheRebuild", "cache_digest", "needs_ldconfig",
           "parse_listing", "rebuild_cache", "shadowed_sonames"]

CACHE = "/etc/ld.so.cache"
CONF_DIR = "/etc/ld.so.conf.d"
LDCONFIGS = ("/usr/sbin/ldconfig", "/sbin/ldconfig")


def needs_ldconfig(carried: list[UpperEntry]) -> bool:
    """Does the agent's carried work hold a shared library or loader configuration?"""
    return any(e.path.startswith(CONF_DIR + "/")
               or is_shared_object(posixpath.basename(e.path)) for e in carried)


def _ldconfig(view: str) -> str | None:
    for candidate in LDCONFIGS:
        host = view + candidate
        if os.path.isfile(host) and not os.path.islink(host):
            return candidate
    return None


def _listing(box: Sandbox, tool: str) -> dict[str, set[str]]:
    """soname -> every path the cache gives for it, whatever the ABI or hwcaps
    subdirectory (``libz.so.1 (libc6,x86-64, hwcap: "x86-64-v3") => ...`` is a line the
    loader prefers on a CPU that has it)."""
    done = box.exec([tool, "-p"], timeout_s=60, workdir="/",
                    env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    return parse_listing(done.output)


def parse_listing(text: str) -> dict[str, set[str]]:
    """``ldconfig -p``'s output as soname -> the paths the cache has for it."""
    paths: dict[str, set[str]] = {}
    for line in text.splitlines():
        name, arrow, path = line.strip().partition(" => ")
        if arrow and name:
            paths.setdefault(name.split()[0], set()).add(path.strip())
    return paths


def shadowed_sonames(before: dict[str, set[str]], after: dict[str, set[str]]) -> list[str]:
    """Findings: each path the rebuilt cache gives for one of the image's sonames that the
    image's cache did not (per soname, as the loader resolves it, hwcaps included)."""
    return [f"A {path}: takes the image's soname {name} (was {', '.join(sorted(paths))})"
            for name, paths in sorted(before.items())
            for path in sorted(after.get(name, set()) - paths)]


def rebuild_cache(box: Sandbox, view: str) -> CacheRebuild:
    """Run the image's ``ldconfig`` in ``box``; say which of the image's sonames now
    resolve elsewhere too (each a finding: a library of the agent's took the image's
    name)."""
    tool = _ldconfig(view)
    if tool is None:
        return CacheRebuild("the image has no ldconfig: the loader cache stays the image's")
    try:
        before = _listing(box, tool)
        done = box.exec([tool], timeout_s=60, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                        workdir="/")
        if done.exit_code != 0:
            return CacheRebuild(f"ldconfig exited {done.exit_code}: {done.output[-200:]}")
        after = _listing(box, tool)
    except SandboxError as exc:
        return CacheRebuild(f"ldconfig could not run: {exc}")
    return CacheRebuild(None, shadowed_sonames(before, after))


@dataclass(frozen=True)
class CacheRebuild:
    problem: str | None
    """Why the cache was not rebuilt (the trial is scored on the image's cache)."""
    shadowed: list[str] = field(default_factory=list)
    """Findings: the image's sonames a carried library took."""


def cache_digest(upper: str) -> str | None:
    """The SHA-256 of the cache in a container's writable layer, with its inode and
    change time (None: it has none). A cache poisoned and then put back has its bytes
    again, never its inode and change time (``rename`` makes a new inode, a write sets
    the change time, and nothing in a container can set it back)."""
    try:
        path = os.path.join(upper, CACHE.lstrip("/"))
        with open(path, "rb") as handle:
            seen = os.fstat(handle.fileno())
            digest = hashlib.sha256(handle.read()).hexdigest()
        return f"{digest}:{seen.st_ino}:{seen.st_ctime_ns}"
    except OSError:
        return None
