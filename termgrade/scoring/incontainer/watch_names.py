"""Names that appear, and files written, where a made file could stand in for something
an image tool reads: watched by the broker from its start to the end of test.sh, and
reported then (staged inline into ``termgrade_watch``).

The host's look at B's layer after the tests judges what is there at the end. Agent code
that runs during the tests (a service, a program a test runs) can make a file an image
tool reads (a ``strict.pm`` first on Perl's ``@INC``, a ``json.py`` beside an image
checker, a ``~/.gitconfig``), let a later test's tool read it, and remove it: the layer
then holds nothing. Or it can rewrite an image file a later test reads and write its
bytes and time back. So the broker watches (inotify, not recursive: each directory the
host names, walked to the depth it gives, and each directory made below them) and
reports, at the end:

* ``gone``: every name that appeared in a watched directory and is not there any more,
  with its type (the host judges it by the same stand-in review as a file still there);
* ``written``: every entry of a watched directory that was there when watched and whose
  bytes were written, or that was deleted, moved aside or renamed over (put back later or
  not), and every named file (watched itself) written, moved or deleted through any of its
  names (the host does not take a copy-up that looks unchanged for an unwritten one).

Kept free of TermGrade imports and of syntax newer than Python 3.8.
"""

import os
import threading
from typing import Any

from watch_base import (  # type: ignore[import-not-found]  # staged inline
    MAX_FIELD,
    InotifyWatch,
    inotify_records,
)

NAMES_NEW = 0x100 | 0x80
"""inotify: create, moved to."""
NAMES_WRITTEN = 0x2
"""inotify: modify (bytes written, truncated). A mode, owner or time put back as it was
(``chmod 600`` of a file already 600) is no change: the host compares those at the end."""
NAMES_MOVED_FROM = 0x40
NAMES_DELETED = 0x200
FILE_WRITTEN = 0x2 | 0x400 | 0x800
"""inotify, on a file itself: modify, delete self, move self (through any of its names)."""
NAMES_ISDIR = 0x40000000
NAMES_OVERFLOW = 0x4000
MAX_NAMES_WATCHED = 8000
"""Directories watched at most (the walk stops there, said in an alarm: a layout this
large is no image's configuration)."""
MADE_DEPTH = 4
"""Levels below a directory made while watched that are watched too (a tree made at once,
``mkdir -p ~/.config/git``)."""
MAX_NAMES_REPORTED = 4000
"""Gone names and written files reported at most, each (past it: an alarm)."""


class Names(InotifyWatch):  # type: ignore[misc]  # its base is staged inline
    """The watch (see the module's text). ``roots``: (directory, depth) pairs the host
    names; ``skip``: prefixes not walked (scratch, the grader's paths)."""

    def __init__(self, roots: "list[list[Any]]", signer: Any, skip: "list[str]",
                 files: "list[str] | None" = None) -> None:
        super().__init__(signer)
        self.skip = tuple(s.rstrip("/") + "/" for s in skip)
        self.appeared: dict[str, int] = {}
        self.present: set[str] = set()
        self.written: set[str] = set()
        self.full = False
        self.started = False
        self.roots = roots
        self.files = list(files or [])
        self.moved: dict[int, str] = {}
        self.inodes: dict[int, str] = {}
        self.ready = threading.Event()

    def start(self, *, background: bool) -> None:
        """Watch the host's directories: in a thread (``background``: beside test.sh's
        start, which takes pytest longer than this walk; a first key is granted only once
        it is done, :meth:`wait`), or now (before a service starts: agent code)."""
        if self.ready.is_set() or self.started:
            return
        self.started = True
        if background:
            threading.Thread(target=self._walk_roots, args=(self.roots,), daemon=True).start()
        else:
            self._walk_roots(self.roots)

    def _walk_roots(self, roots: "list[list[Any]]") -> None:
        try:
            for path in self.files:  # each named file itself, whatever name writes it
                wd = self.add_watch(path, FILE_WRITTEN)
                if wd >= 0:
                    self.inodes[wd] = path
                elif os.path.lexists(path):  # unwatchable: nothing can say it was not
                    self.written.add(path)  # written, so the host excuses no copy-up of it
            for directory, depth in roots:
                self._walk(str(directory), int(depth), note=False)
        finally:
            self.ready.set()

    def wait(self) -> None:
        """Until every directory the host named is watched."""
        self.ready.wait()

    def _skipped(self, path: str) -> bool:
        return (path.rstrip("/") + "/").startswith(self.skip)

    def _walk(self, directory: str, depth: int, *, note: bool) -> None:
        """Watch ``directory`` and its subdirectories ``depth`` levels down (no links
        followed); ``note``: it was made while watched, so what is in it appeared too."""
        if self.fd < 0 or self._skipped(directory):
            return
        if len(self.watches) >= MAX_NAMES_WATCHED:
            self.full = True  # said from the broker's own thread (:meth:`drain`)
            return
        wd = self.add_watch(directory,
                            NAMES_NEW | NAMES_WRITTEN | NAMES_MOVED_FROM | NAMES_DELETED)
        if wd < 0 or wd in self.watches:
            return  # unwatchable, or watched already (through a link to it)
        self.watches[wd] = directory
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if note:
                self._appeared(entry.path)
            else:
                self.present.add(entry.path)  # there when watched: the image's, the work's
            if is_dir and depth > 0:
                self._walk(entry.path, depth - 1, note=note)

    def _appeared(self, path: str) -> None:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = 0o100755  # gone before it was seen: judged as a regular program
        if path not in self.appeared:
            self.appeared[path] = mode

    def fds(self) -> "list[int]":
        return [self.fd] if self.fd >= 0 and self.ready.is_set() else []

    def drain(self) -> None:
        if not self.ready.is_set():
            return  # the walk still adds watches: its events wait in inotify's queue
        for wd, mask, cookie, name in inotify_records(self.fd):
            if self.full:
                self._alarm("watch", f"over {MAX_NAMES_WATCHED} directories to watch for "
                            "names made while the tests ran")
            if mask & NAMES_OVERFLOW:
                self._alarm("inotify", "too many changes to follow in the directories "
                            "watched for names made while the tests ran")
            if wd in self.inodes and mask & FILE_WRITTEN:
                self.written.add(self.inodes[wd])
            directory = self.watches.get(wd)
            if directory is None or not name:
                continue
            path = os.path.join(directory, name)
            if mask & NAMES_MOVED_FROM and path in self.appeared:
                self.moved[cookie] = path  # a name made here, renamed away
                continue
            if mask & (NAMES_MOVED_FROM | NAMES_DELETED) and path not in self.appeared:
                self.written.add(path)  # one that was there, moved aside or deleted (to be
                continue  # put back later: what a reader found there meanwhile was not it)
            if mask & NAMES_NEW and path in self.present and path not in self.appeared:
                self.written.add(path)  # renamed over one that was there
            if mask & NAMES_NEW:
                source = self.moved.pop(cookie, None) if cookie else None
                if source is not None and os.path.dirname(source) == directory:
                    self.appeared.pop(source, None)  # renamed over its target (a lock, a temp
                    # file written then moved into place): what it became is judged there
                self._appeared(path)
                if mask & NAMES_ISDIR:
                    self._walk(path, MADE_DEPTH, note=True)
            elif mask & NAMES_WRITTEN and path not in self.appeared:
                self.written.add(path)  # one that was there (a new one is the layer's)

    def finish(self) -> None:
        """test.sh ended: report what went and what was written."""
        self.wait()
        self.drain()
        gone = [(p, m) for p, m in sorted(self.appeared.items()) if not os.path.lexists(p)]
        for kind, paths in (("gone", gone), ("written", [(p, 0) for p in sorted(self.written)])):
            if len(paths) > MAX_NAMES_REPORTED:
                self._alarm(kind, f"over {MAX_NAMES_REPORTED} names {kind} in the "
                            "directories watched while the tests ran")
            for path, mode in paths[:MAX_NAMES_REPORTED]:
                self.signer.emit({"e": kind, "path": path[:MAX_FIELD], "mode": mode})
