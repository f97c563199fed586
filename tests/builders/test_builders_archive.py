"""The deterministic task archive: exact format, same bytes for the same content."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from termgrade.task.archive import list_archive, pack_task
from termgrade.task.digest import task_manifest
from tests.support.task_dirs import MakeTask


def test_same_content_same_bytes_regardless_of_mtime_and_location(
        make_task: MakeTask, tmp_path: Path) -> None:
    root = make_task("alpha")
    first = pack_task(root)
    copy = tmp_path / "elsewhere" / "alpha"
    shutil.copytree(root, copy)
    for path in copy.rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    assert pack_task(copy) == first
    assert pack_task(root) == first


def test_content_and_mode_changes_change_the_bytes(make_task: MakeTask) -> None:
    root = make_task("alpha")
    before = pack_task(root)
    (root / "solution" / "solve.sh").chmod(0o755)
    after_mode = pack_task(root)
    assert after_mode != before
    (root / "instruction.md").write_text("Something else.\n")
    assert pack_task(root) != after_mode


def test_format_sorted_pax_dirs_owner_and_mtime_zero(make_task: MakeTask) -> None:
    root = make_task("alpha")
    (root / "environment" / "Dockerfile").chmod(0o640)
    data = pack_task(root)
    assert data[3] & 0x08 == 0, "gzip header must carry no file name"
    assert data[4:8] == b"\0\0\0\0", "gzip mtime must be 0"
    raw = gzip.decompress(data)
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert "environment" in names and "tests" in names, "directories are entries"
    assert not any(n.startswith(("./", "/")) for n in names)
    for member in members:
        owner = (member.uid, member.gid, member.uname, member.gname, member.mtime)
        assert owner == (0, 0, "", "", 0)
        assert member.isdir() or member.isreg()
    modes = {m.name: m.mode for m in members}
    assert modes["environment/Dockerfile"] == 0o640
    assert modes["environment"] == (root / "environment").stat().st_mode & 0o7777


def test_list_archive_reads_back_the_manifest(make_task: MakeTask) -> None:
    root = make_task("alpha")
    listing = list_archive(pack_task(root))
    assert listing.problems == []
    assert listing.files == task_manifest(root)
    assert set(listing.dirs) == {"environment", "solution", "tests"}


def test_symlinks_are_refused(make_task: MakeTask) -> None:
    root = make_task("alpha")
    (root / "tests" / "link").symlink_to("/etc/passwd")
    with pytest.raises(ValueError, match="symlink"):
        pack_task(root)


def test_list_archive_flags_links_and_escapes() -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        evil = tarfile.TarInfo("../escape.txt")
        evil.size = 1
        tar.addfile(evil, io.BytesIO(b"x"))
        link = tarfile.TarInfo("link")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tar.addfile(link)
    problems = list_archive(gzip.compress(raw.getvalue())).problems
    assert any("escape.txt" in p for p in problems)
    assert any(p.startswith("link:") for p in problems)
