"""Keeping what of the agent's work reached the scoring container, and rebuilding it.

``grade --keep-work`` keeps each trial's carried work: right after the carry (the agent's
reviewed entries written into the scoring container B's empty layer) and before B starts,
:func:`snapshot` reads B's layer on the host, less the grader's own paths, into a
:class:`~termgrade.records.kept_work.KeptWork` manifest (path, kind, mode, owner, time,
size, sha256, symlink target, hard link, opaque mark, deletion) and stores each regular
file's bytes once by sha256 in the run's :class:`WorkStore`. Nothing the agent does can
change those bytes afterwards: A is frozen and B has not run.

The bound: a trial whose carried files pass ``max_bytes`` (or its entries ``max_entries``)
keeps nothing, never part, and its manifest says why (``regradable: false``): that trial
must be rerun. Extended attributes other than the opaque mark (file capabilities, ``user.``
attributes) are not kept.

:func:`materialize` rebuilds a manifest as an overlay upper directory on the host (a
deletion is the whiteout it was, an opaque directory keeps its mark): the layer a regrade
reviews and carries exactly as grading reviews and carries an agent container's layer
(:mod:`termgrade.scoring.replay`). The store is treated as the agent's bytes: every blob is
checked against its sha256 as it is copied (a mismatch is :class:`KeptWorkError`), and
every path is checked to stay inside the rebuilt layer.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import RecordError
from termgrade.records.kept_work import WORK_DIR, KeptEntry, KeptWork, trial_file_name
from termgrade.records.version import validate_record
from termgrade.sandbox.errors import DiffTooLargeError
from termgrade.sandbox.overlay_diff import UpperEntry, walk_upper
from termgrade.scoring.errors import KeptWorkError
from termgrade.scoring.review.carry import OPAQUE_XATTR

DEFAULT_MAX_BYTES = 256 << 20
"""Carried bytes kept per trial by default (``grade --keep-work-max-mb``)."""
MAX_ENTRIES = 200_000
"""Carried entries kept per trial."""
_CHUNK = 1 << 20


@dataclass(frozen=True)
class WorkStore:
    """``DIR/work``: ``blobs/ab/<sha256>`` (each file's bytes once) and
    ``trials/<trial_id>.json`` (each trial's manifest)."""

    root: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    max_entries: int = MAX_ENTRIES

    @classmethod
    def of_run(cls, out_dir: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> WorkStore:
        return cls(Path(out_dir) / WORK_DIR, max_bytes)

    def blob(self, sha256: str) -> Path:
        return self.root / "blobs" / sha256[:2] / sha256

    def manifest(self, trial_id: str) -> Path:
        return self.root / "trials" / trial_file_name(trial_id)

    def write(self, work: KeptWork) -> Path:
        """The manifest, written atomically."""
        path = self.manifest(work.trial_id)
        atomic_write_text(path, work.model_dump_json(exclude_defaults=False) + "\n")
        return path

    def adopt(self, other: WorkStore, trial_id: str) -> bool:
        """``other``'s kept work of ``trial_id`` into this store (a trial ``grade --reuse``
        copied): its manifest written here, its blobs linked (copied across filesystems).
        False when ``other`` kept none of it."""
        work = other.read(trial_id)
        if work is None:
            return False
        for digest in {e.sha256 for e in work.entries if e.sha256}:
            target = self.blob(digest)
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(other.blob(digest), target)
            except OSError:
                shutil.copyfile(other.blob(digest), target)
        self.write(work)
        return True

    def read(self, trial_id: str) -> KeptWork | None:
        """The manifest of ``trial_id``; None when its work was not kept."""
        path = self.manifest(trial_id)
        if not path.is_file():
            return None
        try:
            return validate_record(KeptWork, path.read_bytes())
        except ValidationError as exc:
            raise RecordError(str(path), f"not a kept-work manifest: {exc}",
                              fix="restore the file, or rerun the trial with `termgrade "
                              "grade`") from None


@dataclass
class KeptLayer:
    """What :func:`snapshot` kept of one carried layer."""

    entries: list[KeptEntry] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    reason: str | None = None
    """Why nothing was kept (over the bound, unreadable); None when kept whole."""

    def manifest(self, *, trial_id: str, task_id: str, task_digest: str | None,
                 agent_side_digest: str | None) -> KeptWork:
        return KeptWork(trial_id=trial_id, task_id=task_id, task_digest=task_digest,
                        agent_side_digest=agent_side_digest, regradable=self.reason is None,
                        reason=self.reason, entries=self.entries if self.reason is None
                        else [], files=self.files, bytes=self.bytes)


def _skipped(path: str, skip: tuple[str, ...]) -> bool:
    return any(path == s or path.startswith(s.rstrip("/") + "/") for s in skip)


def snapshot(upper: str, store: WorkStore, *, skip: tuple[str, ...] = ()) -> KeptLayer:
    """Keep the carried layer ``upper`` (B's, before B starts), less ``skip`` (the grader's
    own paths): its manifest entries, and each file's bytes in ``store`` once. Over the
    store's bound, nothing is kept and the reason says so."""
    kept = KeptLayer()
    walked: list[UpperEntry] = []
    too_many = False
    try:  # the walk stops one entry past the bound: an over-large layer costs no more
        for entry in walk_upper(upper, max_entries=2 * store.max_entries + 64):
            if _skipped(entry.path, skip):
                continue
            too_many = len(walked) >= store.max_entries
            if too_many:
                break
            walked.append(entry)
            if stat.S_ISREG(entry.mode):
                kept.files += 1
                kept.bytes += entry.size
    except DiffTooLargeError:  # the grader's own paths hold the rest: over the bound too
        too_many = True
    if too_many or kept.bytes > store.max_bytes:
        many = (f"over {store.max_entries:,} entries" if too_many
                else f"{len(walked):,} entries, {kept.bytes:,} bytes")
        kept.reason = (f"the carried work ({many}) is over the keep-work bound "
                       f"({store.max_entries:,} entries, {store.max_bytes:,} bytes; grade "
                       "--keep-work-max-mb): not kept, rerun this trial to regrade it")
        return kept
    inodes: dict[tuple[int, int], str] = {}
    for entry in walked:
        info = os.lstat(entry.host_path)
        common = {"path": entry.path, "mode": stat.S_IMODE(info.st_mode), "uid": info.st_uid,
                  "gid": info.st_gid, "mtime_ns": info.st_mtime_ns}
        if entry.whiteout:
            kept.entries.append(KeptEntry(kind="whiteout", **common))
        elif stat.S_ISDIR(info.st_mode):
            kept.entries.append(KeptEntry(kind="dir", opaque=_opaque(entry.host_path),
                                          **common))
        elif stat.S_ISLNK(info.st_mode):
            kept.entries.append(KeptEntry(kind="symlink", target=os.readlink(entry.host_path),
                                          **common))
        elif stat.S_ISREG(info.st_mode):
            first = inodes.get((info.st_dev, info.st_ino)) if info.st_nlink > 1 else None
            if first is not None:
                kept.entries.append(KeptEntry(kind="file", size=info.st_size, link_to=first,
                                              **common))
                continue
            inodes[(info.st_dev, info.st_ino)] = entry.path
            kept.entries.append(KeptEntry(kind="file", size=info.st_size,
                                          sha256=_store(entry.host_path, store), **common))
        # FIFOs, sockets and devices are never carried (carry.py): none is in B's layer
    return kept


def _opaque(host_path: str) -> bool:
    try:
        return os.getxattr(host_path, OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _store(host_path: str, store: WorkStore) -> str:
    """``host_path``'s bytes in the store (once per content); their sha256."""
    folder = store.root / "blobs"
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".blob-")
    try:
        source = os.open(host_path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(source, "rb") as src, os.fdopen(fd, "wb") as out:
            while chunk := src.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
        name = digest.hexdigest()
        target = store.blob(name)
        if target.exists():
            os.unlink(tmp)
        else:
            target.parent.mkdir(exist_ok=True)
            os.chmod(tmp, 0o444)
            os.replace(tmp, target)
        return name
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _checked(path: str) -> str:
    """``path`` when it names an entry inside the layer: absolute, normal, no ``..``."""
    if (not path.startswith("/") or path == "/" or "\0" in path
            or posixpath.normpath(path) != path or path.startswith("//")
            or any(part in ("", ".", "..") for part in path[1:].split("/"))):
        raise KeptWorkError(f"kept entry {path!r}: not an absolute, normal path inside the "
                            "layer", fix="the manifest was edited: rerun the trial")
    return path


def materialize(work: KeptWork, store: WorkStore, target: str) -> None:
    """Rebuild ``work`` as an overlay upper directory in the empty directory ``target``.
    KeptWorkError when a blob is missing or is not the bytes its sha256 names, or an entry
    would land outside ``target`` (its parent not a directory of the layer)."""
    if not work.regradable:
        raise KeptWorkError(f"trial {work.trial_id}: its work was not kept ({work.reason})",
                            fix="rerun the trial with `termgrade grade`")
    dirs = {"/"}
    files: set[str] = set()
    times: list[tuple[str, int]] = []
    for entry in work.entries:
        try:
            _rebuild(work, entry, store, target, dirs, files, times)
        except (OSError, ValueError, OverflowError) as exc:  # a manifest no grade wrote
            raise KeptWorkError(f"kept entry {entry.path!r} cannot be rebuilt: {exc}",
                                fix="the manifest was edited: rerun the trial") from None
    for host, mtime in reversed(times):  # their children changed them
        os.utime(host, ns=(mtime, mtime), follow_symlinks=False)


def _rebuild(work: KeptWork, entry: KeptEntry, store: WorkStore, target: str, dirs: set[str],
             files: set[str], times: list[tuple[str, int]]) -> None:
    """One entry of the layer, its parent kept before it."""
    path = _checked(entry.path)
    if posixpath.dirname(path) not in dirs or path in dirs or path in files:
        raise KeptWorkError(f"kept entry {path}: its parent is not a directory kept "
                            "before it, or it is kept twice",
                            fix="the manifest was edited: rerun the trial")
    host = os.path.join(target, path[1:])
    if entry.kind == "dir":
        os.mkdir(host, 0o700)
        if entry.opaque:
            os.setxattr(host, OPAQUE_XATTR, b"y", follow_symlinks=False)
        dirs.add(path)
        times.append((host, entry.mtime_ns))
    elif entry.kind == "whiteout":
        os.mknod(host, stat.S_IFCHR | 0o600, os.makedev(0, 0))
    elif entry.kind == "symlink":
        os.symlink(entry.target or "", host)
    elif entry.link_to is not None:
        if entry.link_to not in files:
            raise KeptWorkError(f"kept entry {path}: a hard link of {entry.link_to}, "
                                "which is no file kept before it",
                                fix="the manifest was edited: rerun the trial")
        os.link(os.path.join(target, entry.link_to[1:]), host, follow_symlinks=False)
        files.add(path)
        return
    else:
        _copy_blob(work, entry, store, host)
        files.add(path)
    os.chown(host, entry.uid, entry.gid, follow_symlinks=False)
    if entry.kind != "symlink":
        os.chmod(host, entry.mode)  # after chown, which clears setuid
    os.utime(host, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)


def _copy_blob(work: KeptWork, entry: KeptEntry, store: WorkStore, host: str) -> None:
    if entry.sha256 is None:
        raise KeptWorkError(f"kept entry {entry.path}: a file with no sha256",
                            fix="the manifest was edited: rerun the trial")
    blob = store.blob(entry.sha256)
    fix = (f"the store under {store.root} was changed after grading: restore it, or rerun "
           f"trial {work.trial_id} with `termgrade grade`")
    digest = hashlib.sha256()
    size = 0
    try:
        source = os.open(blob, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise KeptWorkError(f"kept entry {entry.path}: blob {blob} unreadable "
                            f"({exc.strerror})", fix=fix) from None
    out = os.open(host, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(source, "rb") as src, os.fdopen(out, "wb") as dst:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            dst.write(chunk)
    if digest.hexdigest() != entry.sha256 or size != entry.size:
        raise KeptWorkError(f"kept entry {entry.path}: blob {blob} holds {size:,} bytes of "
                            f"sha256 {digest.hexdigest()[:16]}..., not the {entry.size:,} "
                            f"bytes of sha256 {entry.sha256[:16]}... its manifest names",
                            fix=fix)
