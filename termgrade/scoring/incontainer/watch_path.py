"""The broker's watch of test.sh's ``PATH`` (staged inline into ``termgrade_watch``).
Kept free of TermGrade imports and of syntax newer than Python 3.8.
"""

import os
from typing import Any

from watch_base import (  # type: ignore[import-not-found]  # staged inline
    IN_NEW_NAME,
    IN_Q_OVERFLOW,
    IN_REWRITE,
    InotifyWatch,
    inotify_events,
)


class PathShadows(InotifyWatch):  # type: ignore[misc]  # its base is staged inline
    """test.sh's ``PATH`` directories, watched from the broker's start to the end, and each
    keyed pytest's own ``PATH`` (:meth:`follow`: a test.sh that sets ``PATH`` itself).

    After the first key is granted:

    * a name that appears in one of them and that a later ``PATH`` directory also holds
      would be run in place of that tool by every test that runs it by name (a ``cmp``
      made in ``/usr/local/bin`` before ``/usr/bin/cmp``): an alarm, even when the file
      is gone again by the end (the host's look at B's layer after the tests sees only
      what is left);
    * an image tool there (present when the first key was granted, not carried from the
      agent: ``carried``) written, replaced or its mode changed: an alarm, even when its
      bytes are written back afterwards (a fake ``sort`` that answered once, then restored).

    Before it (test.sh's own steps, the declared services): a name made then ahead of a
    later ``PATH`` tool is noted; gone by the end, it stood in for that tool and cleaned
    up (a service's fake ``awk``): an alarm. One that stays is judged by the host's look
    at B's layer after the tests, as any created file is."""

    def __init__(self, dirs: "list[str]", signer: Any,
                 carried: "list[str] | None" = None) -> None:
        super().__init__(signer)
        self.dirs: list[str] = []
        self.carried = {os.path.join(os.path.realpath(os.path.dirname(p)),
                                     os.path.basename(p)) for p in carried or []}
        self.early: set[tuple[str, str]] = set()
        self.tools: set[tuple[str, str]] = set()
        self.sealed = False
        self._add(self._real(dirs), first=False)

    @staticmethod
    def _real(dirs: "list[str]") -> "list[str]":
        found: list[str] = []
        for each in dirs:
            real = os.path.realpath(each) if each.startswith("/") else ""
            if real and os.path.isdir(real) and real not in found:
                found.append(real)
        return found

    def _add(self, dirs: "list[str]", *, first: bool) -> None:
        """Watch ``dirs`` too: ahead of the known ones (``first``: a pytest's own PATH,
        which is the order its tests look tools up in), else after them."""
        new = [d for d in dirs if d not in self.dirs]
        if first:
            self.dirs = dirs + [d for d in self.dirs if d not in dirs]
        else:
            self.dirs += new
        for each in new:
            wd = self.add_watch(each, IN_NEW_NAME | IN_REWRITE)
            if wd >= 0:
                self.watches[wd] = each
            if self.sealed:
                self._snapshot(each)

    def follow(self, pid: int) -> None:
        """A pytest about to be keyed: its own ``PATH`` (test.sh may have set one) is
        watched too, in its order."""
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                pairs = handle.read().split(b"\0")
        except OSError:
            return
        for pair in pairs:
            if pair.startswith(b"PATH="):
                self.drain()
                self._add(self._real(pair[5:].decode("utf-8", "replace").split(":")),
                          first=True)
                return

    def _snapshot(self, directory: str) -> None:
        try:
            names = os.listdir(directory)
        except OSError:
            return
        self.tools.update((directory, n) for n in names
                          if os.path.join(directory, n) not in self.carried)

    def _shadowed(self, directory: str, name: str) -> "str | None":
        if directory not in self.dirs:
            return None
        for each in self.dirs[self.dirs.index(directory) + 1:]:
            if os.path.lexists(os.path.join(each, name)):
                return os.path.join(each, name)
        return None

    def seal(self) -> None:
        """The first key is about to be granted: what is on PATH now is the image's
        (less what the agent's work put there)."""
        self.drain()
        self.sealed = True
        for each in self.dirs:
            self._snapshot(each)

    def drain(self) -> None:
        for wd, mask, name in inotify_events(self.fd):
            if mask & IN_Q_OVERFLOW:
                self._alarm("PATH", "too many changes to follow in test.sh's PATH "
                            "directories")
            directory = self.watches.get(wd)
            if directory is None or not name:
                continue
            path = os.path.join(directory, name)
            if not self.sealed:
                if mask & IN_NEW_NAME and self._shadowed(directory, name):
                    self.early.add((directory, name))
                continue
            if (directory, name) in self.tools:
                self._alarm(path, "an image tool on PATH written while the tests ran "
                            "(a stand-in for it, restored or not)")
                continue
            later = self._shadowed(directory, name) if mask & IN_NEW_NAME else None
            if later:
                self._alarm(path, f"made while the tests ran, ahead of {later} on "
                            "PATH: a stand-in for a tool the tests run by name")

    def finish(self) -> None:
        """The tests ended: a name made before them ahead of a later tool, now gone."""
        self.drain()
        for directory, name in sorted(self.early):
            path = os.path.join(directory, name)
            later = self._shadowed(directory, name)
            if later and not os.path.lexists(path):
                self._alarm(path, f"made before the tests ahead of {later} on PATH, gone "
                            "by their end: a stand-in for a tool they ran by name")
