"""Where a symlink the agent made resolves in the scoring container, component by
component as the kernel walks it, through the carried links and the image's own
(:func:`link_target_in_b`), and why one is a finding by where it leads
(:func:`carried_link`: into the grader's paths, through a per-reader magic link, to a
transient path B lacks); :func:`stream_link`: a link to a reader's own streams."""

from __future__ import annotations

import os
import posixpath
import re

from termgrade.sandbox.overlay_diff import LowerView, UpperEntry
from termgrade.task import CONTAINER

__all__ = ["MAX_LINK_HOPS", "TRANSIENT", "TRANSIENT_PREFIXES", "carried_link",
           "link_target_in_b", "stream_link"]

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
_STREAM = re.compile(r"^/dev/(?:stdin|stdout|stderr|tty|fd/\d+)$"
                     r"|^/proc/(?:self|thread-self|\d+)/fd/\d+$")
"""A reader's own standard streams or open files: a link there reads (or writes) what the
process that opens it has open, in a test what the test printed (pytest's capture)."""
_STANDARD_STREAMS = frozenset({"/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/fd/2",
                               "/dev/fd/0", "/dev/fd/1", "/dev/fd/2"})
"""A log written to the reader's standard streams (``/dev/stdout``) is no read of anyone's
files."""


def stream_link(entry: UpperEntry) -> str | None:
    """The standard stream or open file the symlink ``entry`` resolves to (through the
    image's links and the agent's own in its layer), or None."""
    root = entry.host_path[:len(entry.host_path) - len(entry.path)]
    try:
        target = os.readlink(entry.host_path)
    except OSError:
        return None
    step, hops = posixpath.normpath(posixpath.join(posixpath.dirname(entry.path), target)), 0
    while hops < MAX_LINK_HOPS:
        if _STREAM.match(step):
            return step
        host = f"{root}{step}"
        if not os.path.islink(host):
            return None
        try:
            target = os.readlink(host)
        except OSError:
            return None
        step = posixpath.normpath(posixpath.join(posixpath.dirname(step), target))
        hops += 1
    return None


def _lower_link(lower: LowerView, path: str) -> str | None:
    """The image's symlink target at ``path`` (None: not a symlink in the image)."""
    host = lower.host_path(path)
    if host is None:
        return None
    try:
        return os.readlink(host)
    except OSError:
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
