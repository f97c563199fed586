"""The keep-work store on real overlay-format directories (no engine): a carried layer
kept and rebuilt is the same layer (files, modes, owners, times, hard links, symlinks,
whiteouts, opaque marks), repeated bytes are stored once, the bound keeps nothing rather
than part, and a store changed after grading is refused, never rebuilt."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from termgrade.records.kept_work import KeptEntry
from termgrade.sandbox.overlay_diff import walk_upper
from termgrade.scoring.errors import KeptWorkError
from termgrade.scoring.kept import WorkStore, materialize, snapshot
from termgrade.scoring.review.carry import OPAQUE_XATTR

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="whiteouts and owners need root")


def _layer(root: Path) -> Path:
    """An upper directory as the carry leaves it in B: the agent's work and the grader's."""
    upper = root / "upper"
    (upper / "app" / "lib").mkdir(parents=True)
    (upper / "app" / "tool").write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(upper / "app" / "tool", 0o4755)
    (upper / "app" / "copy").write_bytes(b"#!/bin/sh\necho hi\n")  # same bytes, own inode
    os.link(upper / "app" / "tool", upper / "app" / "hard")
    os.symlink("../tool", upper / "app" / "lib" / "link")
    os.chown(upper / "app" / "lib", 1000, 1000)
    os.mknod(upper / "app" / "gone", stat.S_IFCHR | 0o600, os.makedev(0, 0))
    (upper / "etc" / "fresh").mkdir(parents=True)
    os.setxattr(upper / "etc" / "fresh", OPAQUE_XATTR, b"y")
    (upper / "etc" / "fresh" / "conf").write_text("x = 1\n")
    os.utime(upper / "etc" / "fresh" / "conf", ns=(10**18, 10**18))
    (upper / "logs" / "verifier").mkdir(parents=True)  # the grader's own paths
    return upper


def _seen(upper: Path) -> dict[str, tuple[object, ...]]:
    """Every entry as the review sees it, with its bytes and link count."""
    out: dict[str, tuple[object, ...]] = {}
    for entry in walk_upper(str(upper)):
        info = os.lstat(entry.host_path)
        data: object = None
        if stat.S_ISREG(info.st_mode):
            data = Path(entry.host_path).read_bytes()
        elif stat.S_ISLNK(info.st_mode):
            data = os.readlink(entry.host_path)
        times = info.st_mtime_ns if not stat.S_ISLNK(info.st_mode) else None
        out[entry.path] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid,
                           info.st_gid, entry.whiteout, entry.opaque, data, info.st_nlink,
                           times)
    return out


def test_a_kept_layer_rebuilds_as_it_was(tmp_path: Path) -> None:
    upper = _layer(tmp_path)
    store = WorkStore(tmp_path / "work")
    kept = snapshot(str(upper), store, skip=("/logs",))
    assert kept.reason is None and kept.files == 4
    blobs = [p for p in (store.root / "blobs").rglob("*") if p.is_file()]
    assert len(blobs) == 2  # tool, hard and copy share one blob; conf has its own
    work = kept.manifest(trial_id="t", task_id="x", task_digest=None, agent_side_digest=None)
    store.write(work)
    again = store.read("t")
    assert again == work
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    materialize(again, store, str(rebuilt))
    want = {k: v for k, v in _seen(upper).items() if not k.startswith("/logs")}
    assert _seen(rebuilt) == want
    assert want["/app/tool"][1] == 0o4755 and want["/app/tool"][7] == 2  # setuid, linked
    assert want["/etc/fresh"][5] and want["/app/gone"][4]


def test_over_the_bound_nothing_is_kept(tmp_path: Path) -> None:
    upper = _layer(tmp_path)
    store = WorkStore(tmp_path / "work", max_bytes=20)
    kept = snapshot(str(upper), store, skip=("/logs",))
    assert kept.reason is not None and "over the keep-work bound" in kept.reason
    assert kept.entries == [] and not (store.root / "blobs").exists()
    work = kept.manifest(trial_id="t", task_id="x", task_digest=None, agent_side_digest=None)
    assert not work.regradable and work.entries == []
    with pytest.raises(KeptWorkError, match="not kept"):
        materialize(work, store, str(tmp_path))


def test_a_changed_blob_is_refused(tmp_path: Path) -> None:
    upper = _layer(tmp_path)
    store = WorkStore(tmp_path / "work")
    work = snapshot(str(upper), store, skip=("/logs",)).manifest(
        trial_id="t", task_id="x", task_digest=None, agent_side_digest=None)
    tool = next(e for e in work.entries if e.path == "/app/tool")
    assert tool.sha256 == hashlib.sha256(b"#!/bin/sh\necho hi\n").hexdigest()
    blob = store.blob(tool.sha256)
    os.chmod(blob, 0o644)
    blob.write_bytes(b"#!/bin/sh\nexit 0\n")
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    with pytest.raises(KeptWorkError, match="not the 18 bytes of sha256"):
        materialize(work, store, str(rebuilt))


@pytest.mark.parametrize("path", ["/app/../../escape", "app/rel", "/app//x", "/app/./x"])
def test_a_manifest_path_outside_the_layer_is_refused(tmp_path: Path, path: str) -> None:
    store = WorkStore(tmp_path / "work")
    work = snapshot(str(_layer(tmp_path)), store, skip=("/logs",)).manifest(
        trial_id="t", task_id="x", task_digest=None, agent_side_digest=None)
    work.entries.append(KeptEntry(path=path, kind="dir", mode=0o755))
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    with pytest.raises(KeptWorkError):
        materialize(work, store, str(rebuilt))
    assert not (tmp_path / "escape").exists()


def test_an_entry_under_a_kept_symlink_is_refused(tmp_path: Path) -> None:
    """A symlink to the host's /tmp, then a file 'below' it: never written through it."""
    store = WorkStore(tmp_path / "work")
    outside = tmp_path / "outside"
    outside.mkdir()
    work = snapshot(str(_layer(tmp_path)), store, skip=("/logs",)).manifest(
        trial_id="t", task_id="x", task_digest=None, agent_side_digest=None)
    work.entries += [KeptEntry(path="/jump", kind="symlink", target=str(outside)),
                     KeptEntry(path="/jump/planted", kind="dir", mode=0o755)]
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    with pytest.raises(KeptWorkError, match="parent is not a directory"):
        materialize(work, store, str(rebuilt))
    assert list(outside.iterdir()) == []


def test_over_the_entry_bound_nothing_is_kept(tmp_path: Path) -> None:
    upper = _layer(tmp_path)
    store = WorkStore(tmp_path / "work", max_entries=5)
    kept = snapshot(str(upper), store, skip=("/logs",))
    assert kept.reason is not None and "over 5 entries" in kept.reason
    assert kept.entries == [] and not (store.root / "blobs").exists()
    exact = WorkStore(tmp_path / "exact", max_entries=len(_seen(upper)) - 2)  # less /logs/*
    assert snapshot(str(upper), exact, skip=("/logs",)).reason is None


def test_a_manifest_no_grade_wrote_is_refused_not_crashed(tmp_path: Path) -> None:
    """A hard link to nothing kept, a file whose blob is gone: each refused by name."""
    store = WorkStore(tmp_path / "work")
    work = snapshot(str(_layer(tmp_path)), store, skip=("/logs",)).manifest(
        trial_id="t", task_id="x", task_digest=None, agent_side_digest=None)
    for extra in (KeptEntry(path="/app/ln", kind="file", link_to="/nowhere"),
                  KeptEntry(path="/app/gone2", kind="file", sha256="0" * 64, size=1)):
        rebuilt = tmp_path / f"rebuilt-{extra.path.rsplit('/', 1)[1]}"
        rebuilt.mkdir()
        with pytest.raises(KeptWorkError, match=extra.path):
            materialize(work.model_copy(update={"entries": [*work.entries, extra]}), store,
                        str(rebuilt))
