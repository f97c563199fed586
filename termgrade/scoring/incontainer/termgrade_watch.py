"""What the broker watches in the scoring container: the private copy of the tests and the
verify-time install targets; copied in at scoring time beside the broker, which imports
it from its own read-only directory. Kept free of TermGrade imports and of syntax newer
than Python 3.8.
"""

import hashlib
import os
import re
from typing import Any

from watch_base import (  # type: ignore[import-not-found]  # staged inline
    IN_ISDIR,
    IN_Q_OVERFLOW,
    InotifyWatch,
    inotify_events,
)
from watch_names import Names  # type: ignore[import-not-found]  # staged inline
from watch_path import PathShadows  # type: ignore[import-not-found]  # staged inline

ARCHIVES = (".whl", ".zip", ".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2")
PIP_METADATA = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
"""Files pip writes into a ``.dist-info`` itself (not members of the wheel)."""
IN_WRITES = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
"""inotify: modify, attrib, close-write, moved from/to, create, delete, delete/move self."""
LAUNCHER = re.compile(
    r"#!(/\S+)\n# -\*- coding: utf-8 -\*-\nimport re\nimport sys\n"
    r"from [A-Za-z_][\w.]* import ([A-Za-z_]\w*)\n"
    r"if __name__ == (['\"])__main__\3:\n"
    r"    sys\.argv\[0\] = re\.sub\(r(['\"])\(-script\\\.pyw\|\\\.exe\)\?\$\4, \4\4, "
    r"sys\.argv\[0\]\)\n    sys\.exit\(\2\(\)\)\n")
"""pip's console-script launcher (distlib's template), nothing added."""
CACHES = (".pytest_cache", "pytest-cache-files-")
"""pytest's cache of the last run under the rootdir (and the temporary directory it is
made in): written by every honest session that keeps the cache provider."""


def is_cache(name: str) -> bool:
    return name == CACHES[0] or name.startswith(CACHES[1])


MAX_WATCHED = 256 << 20


def _sha(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest(root: str, known: "dict[str, str] | None" = None) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``root`` (a symlink: its target).

    With ``known`` (an earlier :func:`signatures` of the root), a file whose signature is
    unchanged keeps that signature instead of being read: an install target is the
    verifier's whole environment, and only what changed in it needs its bytes checked."""
    out: dict[str, str] = {}
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not is_cache(d)]
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(here, d)))]:
            path = os.path.join(here, name)
            relative = os.path.relpath(path, root)
            try:
                if os.path.islink(path):
                    out[relative] = "link:" + os.readlink(path)
                    continue
                signature = _signature(path)
                out[relative] = signature if known is not None and \
                    known.get(relative) == signature else _sha(path)
            except OSError:
                out[relative] = "unreadable"
    return out


def _signature(path: str) -> str:
    """Inode, size and change time: no process can set a file's ctime back."""
    info = os.lstat(path)
    return f"stat:{info.st_ino}:{info.st_size}:{info.st_ctime_ns}"


def signatures(root: str) -> dict[str, str]:
    """Relative path -> :func:`_signature` (a symlink: its target), read without hashing."""
    out: dict[str, str] = {}
    for here, dirs, names in os.walk(root):
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(here, d)))]:
            path = os.path.join(here, name)
            try:
                out[os.path.relpath(path, root)] = ("link:" + os.readlink(path)) \
                    if os.path.islink(path) else _signature(path)
            except OSError:
                out[os.path.relpath(path, root)] = "unreadable"
    return out


def archive_members(root: str, files: dict[str, str]) -> set[tuple[str, str]]:
    """(member name, sha256) of every regular member of the archives the tests ship."""
    import tarfile
    import zipfile

    found: set[tuple[str, str]] = set()
    for relative in files:
        path = os.path.join(root, relative)
        try:
            if relative.endswith((".whl", ".zip")):
                with zipfile.ZipFile(path) as archive:
                    for info in archive.infolist():
                        if not info.is_dir():
                            data = archive.read(info)
                            found.add((info.filename.lstrip("./"),
                                       hashlib.sha256(data).hexdigest()))
            elif relative.endswith(ARCHIVES):
                with tarfile.open(path) as archive:
                    for member in archive:
                        handle = archive.extractfile(member) if member.isfile() else None
                        if handle is not None:
                            found.add((member.name.lstrip("./"),
                                       hashlib.sha256(handle.read()).hexdigest()))
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, tarfile.TarError):
            continue
    return found


class Writable(InotifyWatch):  # type: ignore[misc]  # its base is staged inline
    """``/tests`` (a private writable copy) and the verify-time install target, watched.

    Until the first key is granted, test.sh may unpack into them what the task ships in
    ``tests/``: every new file must be, byte for byte, a member of an archive there (pip's
    own ``.dist-info`` bookkeeping and ``bin/`` launchers aside), no file of the tests may
    change, and only archives may go. From the first grant on, inotify reports any write
    at all. Whatever breaks these rules is an alarm: agent code run by test.sh or by the
    tests cannot rewrite the verifier unseen.
    """

    def __init__(self, roots: "list[str]", signer: Any, installs: "list[str] | None" = None,
                 pythons: "list[str] | None" = None,
                 path_dirs: "list[str] | None" = None,
                 path_carried: "list[str] | None" = None,
                 names: "list[list[Any]] | None" = None,
                 names_skip: "list[str] | None" = None,
                 names_files: "list[str] | None" = None) -> None:
        super().__init__(signer)
        self.shadows = PathShadows(list(path_dirs or []), signer, path_carried)
        self.names = Names(list(names or []), signer, list(names_skip or []), names_files)
        self.roots = [r for r in roots if os.path.isdir(r)]
        self.installs = [r for r in installs or [] if os.path.isdir(r)]
        self.pythons = list(pythons or [])
        self.base = {root: manifest(root) for root in self.roots}
        self.base.update({root: signatures(root) for root in self.installs})
        tests = self.roots[0] if self.roots else ""
        self.members = archive_members(tests, self.base.get(tests, {}))
        self.roots += self.installs
        self.sealed = False
        for root in self.roots:
            for here, _dirs, _names in os.walk(root):
                self._watch(here)

    def _watch(self, path: str) -> None:
        wd = self.add_watch(path, IN_WRITES)
        if wd >= 0:
            self.watches[wd] = path

    def drain(self) -> None:
        """Read inotify's events: new directories get watched; after the first grant every
        write is an alarm (and a new name on PATH ahead of a tool: :class:`PathShadows`)."""
        self.shadows.drain()
        self.names.drain()
        for wd, mask, name in inotify_events(self.fd):
            if mask & IN_Q_OVERFLOW:
                self._alarm("inotify", "too many writes to follow: the verifier's "
                            "files may have changed unseen")
            path = os.path.join(self.watches.get(wd, "?"), name)
            if mask & IN_ISDIR and mask & 0x100:
                self._watch(path)
            if self.sealed and not any(is_cache(part) for part in path.split("/")):
                self._alarm(path, "written while the tests ran")

    def check(self) -> None:
        """Every change since the broker started must be an unpacked archive member (and,
        at the end, :meth:`PathShadows.finish`)."""
        self.drain()
        if self.sealed:
            self.shadows.finish()
        for root in self.roots:
            install = root in self.installs
            before = self.base[root]
            now = manifest(root, before if install else None)
            whose = "of the verifier's environment" if install else "of the tests"
            for relative, digest in now.items():
                if before.get(relative) == digest:
                    continue
                path = os.path.join(root, relative)
                if relative in before:
                    self._alarm(path, f"a file {whose} changed")
                elif not self._shipped(relative, digest, install=install) and not (
                        install and self._launcher(path, relative)):
                    self._alarm(path, "not a member of an archive the task ships in tests/")
            for relative in before:
                if relative not in now and (install or not relative.endswith(ARCHIVES)):
                    self._alarm(os.path.join(root, relative), f"a file {whose} deleted")

    def _shipped(self, relative: str, digest: str, *, install: bool) -> bool:
        parts = relative.split("/")
        if install and len(parts) >= 2 and parts[-2].endswith(".dist-info") \
                and parts[-1] in PIP_METADATA:
            return True
        return any(relative == name or relative.endswith("/" + name)
                   for name, sha in self.members if sha == digest)

    def _launcher(self, path: str, relative: str) -> bool:
        """A console script pip wrote into ``bin/``: its template exactly, run by one of
        the verifier's Pythons, calling a function it imports (what it imports is the
        closure's or a shipped wheel's: the plugin reports anything else)."""
        if not relative.startswith("bin/") or "/" in relative[4:] or os.path.islink(path):
            return False
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read(4096)
        except (OSError, UnicodeDecodeError):
            return False
        found = LAUNCHER.fullmatch(text)
        if found is None:
            return False
        shebang = found.group(1)
        ours = {os.path.realpath(p) for p in self.pythons}
        return os.path.realpath(shebang) in ours and (shebang in self.pythons or any(
            shebang.startswith(root.rstrip("/") + "/") for root in self.installs))

    def fds(self) -> "list[int]":
        """What the broker's loop wakes on (a name made is seen at once)."""
        return list(self.names.fds())

    def finish(self) -> None:
        """test.sh ended: the last check, and the names gone and files written."""
        self.check()
        self.names.finish()

    def seal(self) -> None:
        """The first key is about to be granted: from now on nothing may write here."""
        if not self.sealed:
            self.names.wait()
            self.check()
            self.shadows.seal()
            self.sealed = True
