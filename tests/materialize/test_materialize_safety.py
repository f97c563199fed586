"""The safe unpacker refuses every hostile archive and writes nothing outside DIR."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from termgrade.materialize import ArchiveLimits, TaskArchiveRow, unpack_row
from termgrade.materialize.errors import MaterializeError, UnsafeArchiveError
from termgrade.task.digest import FileEntry
from tests.support.hub_fixtures import hf_home  # noqa: F401

Member = tuple[tarfile.TarInfo, bytes | None]


def member(name: str, data: bytes | None = b"x", *, kind: bytes = tarfile.REGTYPE,
           mode: int = 0o644, link: str = "") -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, link
    info.size = len(data) if data is not None and kind == tarfile.REGTYPE else 0
    return info, data if kind == tarfile.REGTYPE else None


def tgz(*members: Member) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    out = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def entry(path: str, data: bytes, mode: int = 0o644) -> FileEntry:
    return FileEntry(path, len(data), hashlib.sha256(data).hexdigest(), mode)


def row(archive: bytes, files: list[FileEntry] | None = None,
        sha: str | None = "auto") -> TaskArchiveRow:
    digest = hashlib.sha256(archive).hexdigest() if sha == "auto" else sha
    return TaskArchiveRow("evil-task", archive, digest, files or [], "test")


GOOD = [member("task.toml", b"[metadata]\n"), member("solution", kind=tarfile.DIRTYPE,
                                                      mode=0o700),
        member("solution/solve.sh", b"#!/bin/bash\necho hi\n", mode=0o755)]
GOOD_FILES = [entry("task.toml", b"[metadata]\n"),
              entry("solution/solve.sh", b"#!/bin/bash\necho hi\n", 0o755)]


@pytest.fixture
def target(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir()
    return tmp_path / "work" / "task"


def refused(target: Path, archive: bytes, files: list[FileEntry] | None = None,
            limits: ArchiveLimits | None = None, match: str | None = None) -> UnsafeArchiveError:
    before = sorted(os.listdir(target.parent))
    with pytest.raises(UnsafeArchiveError, match=match) as err:
        unpack_row(row(archive, files), target, limits)
    assert sorted(os.listdir(target.parent)) == before, "a partial tree was left behind"
    assert not target.exists()
    return err.value


def test_a_good_archive_unpacks_with_modes(target: Path) -> None:
    unpack_row(row(tgz(*GOOD), GOOD_FILES), target)
    assert (target / "solution" / "solve.sh").read_bytes() == b"#!/bin/bash\necho hi\n"
    assert stat.S_IMODE((target / "solution" / "solve.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((target / "solution").stat().st_mode) == 0o700
    assert stat.S_IMODE((target / "task.toml").stat().st_mode) == 0o644
    assert os.listdir(target.parent) == ["task"]


@pytest.mark.parametrize("name", ["/etc/cron.d/evil", "../escape.txt", "a/../../escape.txt",
                                  "./task.toml", "a//b", "a\\..\\b"])
def test_unsafe_paths_are_refused(target: Path, name: str) -> None:
    refused(target, tgz(member(name)), [entry(name.lstrip("/"), b"x")],
            match=r"absolute path|'\.\.', '\.' or empty|backslash")
    assert not (target.parent.parent / "escape.txt").exists()


@pytest.mark.parametrize("spec,what", [
    (member("link", kind=tarfile.SYMTYPE, link="/etc/passwd"), "symlink"),
    (member("link", kind=tarfile.SYMTYPE, link="task.toml"), "symlink"),
    (member("hard", kind=tarfile.LNKTYPE, link="task.toml"), "hard link"),
    (member("tty", kind=tarfile.CHRTYPE), "device"),
    (member("disk", kind=tarfile.BLKTYPE), "device"),
    (member("pipe", kind=tarfile.FIFOTYPE), "fifo"),
])
def test_links_devices_and_fifos_are_refused(target: Path, spec: Member, what: str) -> None:
    refused(target, tgz(member("task.toml"), spec), match=what)


def test_a_symlink_escape_writes_nothing_outside(target: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    evil = tgz(member("evil", kind=tarfile.SYMTYPE, link=str(outside)),
               member("evil/planted.sh", b"rm -rf /\n"))
    refused(target, evil, match="symlink")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o1777])
def test_setuid_setgid_and_sticky_bits_are_refused(target: Path, mode: int) -> None:
    refused(target, tgz(member("solve.sh", mode=mode)), match="setuid")


def test_duplicate_paths_are_refused(target: Path) -> None:
    refused(target, tgz(member("a.txt", b"1"), member("a.txt", b"2")), match="duplicate")


def test_too_many_members_is_a_bomb(target: Path) -> None:
    archive = tgz(*(member(f"f{i}", b"") for i in range(50)))
    refused(target, archive, limits=ArchiveLimits(max_members=20), match="more than 20")


def test_expanded_size_over_the_limit_is_a_bomb(target: Path) -> None:
    archive = tgz(member("zeros.bin", bytes(3 * 1024 * 1024)))
    refused(target, archive, limits=ArchiveLimits(max_bytes=1024 * 1024,
                                                  max_file_bytes=10**9), match="bomb")


def test_a_gzip_bomb_is_stopped_by_the_default_limits(target: Path) -> None:
    archive = tgz(member("zeros.bin", bytes(40 * 1024 * 1024)))
    assert len(archive) < 200_000
    refused(target, archive, match="bomb")


def test_one_file_over_the_per_file_limit_is_refused(target: Path) -> None:
    refused(target, tgz(member("big", bytes(4096))), limits=ArchiveLimits(max_file_bytes=1000),
            match="per-file limit")


@pytest.mark.parametrize("junk", [b"not gzip at all", gzip.compress(b"not a tar" * 100)])
def test_garbage_is_refused(target: Path, junk: bytes) -> None:
    refused(target, junk, match="not a valid")


def test_an_extra_file_not_in_the_manifest_is_refused(target: Path) -> None:
    archive = tgz(*GOOD, member("tests/__pycache__/conftest.cpython-311.pyc", b"\0evil"))
    refused(target, archive, GOOD_FILES, match="not in the files manifest")


@pytest.mark.parametrize("change", [
    lambda fs: fs[:1],
    lambda fs: [fs[0], FileEntry(fs[1].path, fs[1].size, "0" * 64, fs[1].mode)],
    lambda fs: [fs[0], FileEntry(fs[1].path, fs[1].size, fs[1].sha256, 0o644)],
])
def test_a_manifest_mismatch_is_refused(
        target: Path, change: Callable[[list[FileEntry]], list[FileEntry]]) -> None:
    refused(target, tgz(*GOOD), change(GOOD_FILES), match="manifest")


def test_an_archive_sha256_mismatch_is_refused(target: Path) -> None:
    with pytest.raises(UnsafeArchiveError, match="hashes to"):
        unpack_row(row(tgz(*GOOD), GOOD_FILES, sha="0" * 64), target)
    assert not target.exists()


def test_an_existing_target_is_refused_unless_empty(target: Path) -> None:
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(MaterializeError, match="already exists"):
        unpack_row(row(tgz(*GOOD), GOOD_FILES), target)
    assert (target / "keep.txt").read_text() == "mine"
    (target / "keep.txt").unlink()
    unpack_row(row(tgz(*GOOD), GOOD_FILES), target)
    assert (target / "task.toml").is_file()
