"""Carrying the agent's work, and nothing else, into the scoring container.

The scoring container B is created, not started, while the agent works: its writable
layer is then an empty directory on the host that no mount uses. After the review the
grader replays there exactly the reviewed entries of the agent container A's writable
layer, in the overlay's own terms:

- a regular file is **moved** (renamed) out of A's layer into B's: one system call, no
  data copied, so a million files carry in seconds; its inode, mode, owner, times, hard
  links to other carried names and link count stay as the agent left them. A is frozen
  and is killed before B starts: nothing of the agent's ever writes those files again;
- a directory is made with the agent's mode, owner and times (an opaque one keeps its
  opaque mark: nothing of the image's shows through it, as in A);
- a symlink is made anew with its owner and times;
- a deletion is written as the whiteout it was.

Devices, FIFOs and sockets are not carried. Only then does B start: the kernel shows it
exactly the agent's reviewed changes on top of the image, as if B had made them itself,
and no process of the agent's has ever run there. Parents the entries need are made with
the metadata A showed for them (never over a file or link of the image's: the review
carries nothing below a directory it left out). Every path is built from directory entry names (no
``/``, no ``..``) and checked to have no symlink among its parents in B's layer, so
nothing is written outside it. What is not carried (findings) stays in A's layer, which
is removed with A.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import shutil
import stat
import uuid
from dataclasses import dataclass

from termgrade.sandbox.overlay_diff import OPAQUE_XATTRS, LowerView, UpperEntry
from termgrade.scoring.errors import CarryError
from termgrade.scoring.review.integrity import LayerReview
from termgrade.scoring.review.pathset import MarkedDirs

OPAQUE_XATTR = OPAQUE_XATTRS[0]
"""The mark the engine's overlay reads (``trusted.``: the agent, without CAP_SYS_ADMIN,
cannot set it; a ``user.overlay.opaque`` it set means nothing to the kernel, so it is
not replayed either)."""

COPY_INSTEAD = {errno.EXDEV}
"""A move refused for this reason (the two layers on different filesystems) is carried
as a copy instead."""


HOLDING = ".termgrade-held"
"""Where, in the agent's layer, what a moved tree took along and the review held goes
back to."""


@dataclass
class CarryStats:
    moved: int = 0
    copied: int = 0
    directories: int = 0
    symlinks: int = 0
    whiteouts: int = 0
    trees: int = 0
    """Directories moved as one piece, with everything below them."""
    held: int = 0
    """Entries a tree took along that went back to the agent's layer."""


class LayerWriter:
    """Writes entries into a writable layer that no mount uses (the scoring container's,
    before it starts). Paths are absolute container paths."""

    def __init__(self, target_upper: str, source_upper: str | None = None,
                 lower: LowerView | None = None) -> None:
        self.target = target_upper
        self.source = source_upper
        self.lower = lower
        self.stats = CarryStats()
        self._made: set[str] = set()
        self._dir_times: list[tuple[str, int, int]] = []
        self._trees_refused = False
        self._holding: str | None = None

    def _host(self, root: str, path: str) -> str:
        return os.path.join(root, path.lstrip("/"))

    def parent_of(self, path: str) -> str:
        """Make ``path``'s parents (with the metadata the agent's container showed for
        them), and return the host path of ``path``."""
        missing = []
        parent = posixpath.dirname(path)
        while parent not in ("/", "") and parent not in self._made:
            missing.append(parent)
            parent = posixpath.dirname(parent)
        for parent in reversed(missing):  # top down
            host = self._host(self.target, parent)
            try:
                info = os.lstat(host)
            except FileNotFoundError:
                image = self.lower.lstat(parent) if self.lower is not None else None
                if image is not None and not stat.S_ISDIR(image.st_mode):
                    # the review never carries an entry below a file or link of the
                    # image's unless it carried the directory that replaced it
                    raise CarryError(f"{path} lies below {parent}, which the image has as "
                                     "no directory and which was not carried") from None
                mode, uid, gid = 0o755, 0, 0
                shown = self._shown(parent)
                if shown is not None and stat.S_ISDIR(shown.st_mode):
                    mode, uid, gid = stat.S_IMODE(shown.st_mode), shown.st_uid, shown.st_gid
                os.mkdir(host, mode)
                os.chown(host, uid, gid, follow_symlinks=False)
                os.chmod(host, mode)
            else:
                if not stat.S_ISDIR(info.st_mode):
                    raise CarryError(f"{parent} is not a directory in the scoring layer")
            self._made.add(parent)
        return self._host(self.target, path)

    def _shown(self, path: str) -> os.stat_result | None:
        """The metadata a parent the entries need is made with: the image's directory
        where the image has one (a directory the transfer set only passes through keeps
        the image's mode and owner), else what the agent's container showed."""
        below = self.lower.lstat(path) if self.lower is not None else None
        if below is not None and stat.S_ISDIR(below.st_mode):
            return below
        if self.source is not None:
            with contextlib.suppress(FileNotFoundError):
                return os.lstat(self._host(self.source, path))
        return below

    def directory(self, path: str, mode: int, uid: int, gid: int, *,
                  opaque_xattr: str | None = None, times_ns: tuple[int, int] | None = None
                  ) -> None:
        host = self.parent_of(path)
        try:
            os.mkdir(host, stat.S_IMODE(mode))
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(host).st_mode):
                raise CarryError(f"{path} exists in the scoring layer and is no "
                                 "directory") from None
        os.chown(host, uid, gid, follow_symlinks=False)
        os.chmod(host, stat.S_IMODE(mode))
        if opaque_xattr:
            os.setxattr(host, opaque_xattr, b"y", follow_symlinks=False)
        if times_ns is not None:
            self._dir_times.append((host, *times_ns))
        self._made.add(path)
        self.stats.directories += 1

    def file(self, path: str, data: bytes, *, mode: int = 0o644) -> None:
        """A new root-owned file with ``data`` (the grader's own files)."""
        host = self.parent_of(path)
        descriptor = os.open(host, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
        os.chown(host, 0, 0)
        os.chmod(host, mode)

    def move_tree(self, entry: UpperEntry) -> bool:
        """A directory and everything below it, moved as one piece (its own mode, owner,
        times and opaque mark go with it). False where the filesystem refuses to move
        across the layers (XFS project quotas): the caller carries it entry by entry."""
        if self._trees_refused:
            return False
        target = self.parent_of(entry.path)
        try:
            os.rename(entry.host_path, target)
        except OSError as exc:
            if exc.errno not in COPY_INSTEAD:
                raise
            self._trees_refused = True
            return False
        for here, _dirs, names in os.walk(target):
            for name in names:
                _drop_copy_up_marks(os.path.join(here, name))
        self._made.add(entry.path)
        self.stats.trees += 1
        return True

    def move_back(self, path: str) -> None:
        """What a moved tree took along and the review held: out of this layer again,
        into a holding directory of the source layer (removed with the agent's
        container)."""
        if self.source is None:
            raise CarryError(f"{path}: nowhere to put back what the review held")
        if self._holding is None:
            self._holding = os.path.join(self.source, f"{HOLDING}-{uuid.uuid4().hex}")
            os.mkdir(self._holding, 0o700)
        os.rename(self._host(self.target, path),
                  os.path.join(self._holding, str(self.stats.held)))
        self.stats.held += 1

    def carry(self, entry: UpperEntry) -> None:
        """One reviewed entry of the source layer (parents carried or made first)."""
        host = self.parent_of(entry.path)
        if stat.S_ISREG(entry.mode):  # a whiteout is a character device
            self._file(entry.host_path, host)
            return
        info = os.lstat(entry.host_path)
        if entry.whiteout:
            os.mknod(host, stat.S_IFCHR, os.makedev(0, 0))
            self.stats.whiteouts += 1
        elif stat.S_ISDIR(info.st_mode):
            opaque = OPAQUE_XATTR if entry.opaque and _has_mark(entry.host_path) else None
            self.directory(entry.path, info.st_mode, info.st_uid, info.st_gid,
                           opaque_xattr=opaque, times_ns=(info.st_atime_ns, info.st_mtime_ns))
        elif stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(entry.host_path), host)
            os.chown(host, info.st_uid, info.st_gid, follow_symlinks=False)
            os.utime(host, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
            self.stats.symlinks += 1

    def _file(self, source: str, host: str) -> None:
        """Moved (its inode, with its metadata and links); copied across filesystems."""
        try:
            os.rename(source, host)
            _drop_copy_up_marks(host)
            self.stats.moved += 1
            return
        except OSError as exc:
            if exc.errno not in COPY_INSTEAD:
                raise
        info = os.lstat(source)
        shutil.copyfile(source, host, follow_symlinks=False)
        os.chown(host, info.st_uid, info.st_gid, follow_symlinks=False)
        os.chmod(host, stat.S_IMODE(info.st_mode))
        os.utime(host, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
        self.stats.copied += 1

    def finish(self) -> CarryStats:
        """Directory times last (making their children changed them), deepest first."""
        for host, atime, mtime in reversed(self._dir_times):
            os.utime(host, ns=(atime, mtime), follow_symlinks=False)
        self._dir_times.clear()
        return self.stats


def carry_work(target_upper: str, agent_layer: tuple[str, list[str]],
               review: LayerReview) -> LayerWriter:
    """The agent's reviewed work written into ``target_upper``, in walk order: a carried
    or unchanged directory moves as one piece with everything below it; then whatever it
    took along that the review held (a finding, the engine's, a FIFO) goes back to the
    agent's layer, so the cost is the number of top directories and held entries, not of
    files. Other entries go one by one; deletions as whiteouts. The writer is returned
    for the grader's own paths, then :meth:`LayerWriter.finish`. Raises OSError
    (CarryError) when the layer cannot be written."""
    upper, lowers = agent_layer
    writer = LayerWriter(target_upper, upper, LowerView(lowers))
    moved = MarkedDirs()
    for verdict, entry in review.replay:  # parents first
        if moved.below(entry.path):
            continue
        if verdict == "ancestor":  # a directory the set passes through: made when needed
            continue
        if entry.is_dir and writer.move_tree(entry):
            moved.add(entry.path)
        elif verdict != "unchanged":  # an unchanged directory is made when needed
            writer.carry(entry)
    back = MarkedDirs()
    for path in review.held:  # parents first
        if moved.below(path) and not back.below(path):
            writer.move_back(path)
            back.add(path)
    return writer


COPY_UP_MARKS = ("trusted.overlay.origin", "trusted.overlay.metacopy",
                 "trusted.overlay.nlink", "trusted.overlay.upper")
"""What the agent's overlay wrote on a file it copied up from the image (where it came
from in A's lower layers): in B's layer it points at nothing B's overlay can find, and a
read of the file there fails (``ESTALE``: an image file the agent moved into its answer)."""


def _drop_copy_up_marks(host: str) -> None:
    """A moved file's copy-up marks, removed (B's overlay would follow them)."""
    try:
        names = os.listxattr(host, follow_symlinks=False)
    except OSError:
        return
    for name in names:
        if name in COPY_UP_MARKS:
            with contextlib.suppress(OSError):
                os.removexattr(host, name, follow_symlinks=False)


def _has_mark(host_path: str) -> bool:
    try:
        return os.getxattr(host_path, OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False

