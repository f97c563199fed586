"""`termgrade validate`: task archives against their manifests and the task tree."""

from __future__ import annotations

import gzip
import hashlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from termgrade.validate import ValidationFinding, validate_repo
from tests.support.staged_repo import TASKS, only, pristine, repo, rewrite

__all__ = ["pristine", "repo"]  # fixtures, used by name


def test_tampered_archive_is_named_by_file_row_and_field(repo: Path) -> None:
    def corrupt(rows: list[dict[str, Any]]) -> None:
        rows[1]["archive"] = rows[0]["archive"]
    rewrite(repo / TASKS, corrupt)
    findings = only(validate_repo(repo, load=False, secrets=False).findings, "archive")
    assert ValidationFinding("archive", TASKS, "archive does not hash to archive_sha256", row=1,
                   field="archive_sha256") in findings
    assert any(f.row == 1 and f.field == "files" and "bravo" in f.message for f in findings)


def test_changed_task_tree(repo: Path) -> None:
    (repo / "tasks" / "alpha" / "instruction.md").write_text("Edited.\n")
    findings = validate_repo(repo, load=False, secrets=False).findings
    assert [str(f) for f in findings] == [
        f"archive: tasks/alpha: differs from the manifest of row 0 of {TASKS}"]


def _swap_archive(repo: Path, archive: Callable[[bytes], bytes]) -> None:
    """Row 0's archive replaced by ``archive(its tar stream)``, its hash updated."""
    def swap(rows: list[dict[str, Any]]) -> None:
        rows[0]["archive"] = archive(gzip.decompress(rows[0]["archive"]))
        rows[0]["archive_sha256"] = hashlib.sha256(rows[0]["archive"]).hexdigest()
    rewrite(repo / TASKS, swap)


def gz(raw: bytes, *, level: int = 9, mtime: int = 0) -> bytes:
    """gzip as the packer does it (GzipFile, no file name), at ``level`` and ``mtime``."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=out, mode="wb", mtime=mtime,
                       compresslevel=level) as handle:
        handle.write(raw)
    return out.getvalue()


NOT_OUR_GZIP = (f"archive: {TASKS} row 0 [archive]: alpha: not gzipped as TermGrade packs "
                "archives (one member; level 9, no file name, mtime 0)")


@pytest.mark.parametrize("regzip", [
    pytest.param(lambda raw: gz(raw, level=1), id="level-1"),
    pytest.param(lambda raw: gz(raw, mtime=7), id="mtime"),
    pytest.param(lambda raw: gzip.compress(raw, compresslevel=9, mtime=0), id="os-byte"),
    pytest.param(lambda raw: gz(raw[:512]) + gz(raw[512:]), id="two-members"),
])
def test_the_same_files_gzipped_another_way_do_not_repack(
        repo: Path, regzip: Callable[[bytes], bytes]) -> None:
    """Same files, same manifest, right hash, but not gzipped as TermGrade gzips: the
    archive lists the tree exactly, yet it is not what the tree packs to."""
    _swap_archive(repo, regzip)
    findings = validate_repo(repo, load=False, secrets=False).findings
    assert [str(f) for f in findings] == [NOT_OUR_GZIP]


def test_another_tar_stream_of_the_same_files_does_not_repack(repo: Path) -> None:
    """Gzipped as TermGrade gzips and listing the same files, but another tar stream
    (padded with another record of zeros): not byte for byte what the tree packs to."""
    _swap_archive(repo, lambda raw: gz(raw + bytes(10240)))
    findings = validate_repo(repo, load=False, secrets=False).findings
    assert [str(f) for f in findings] == [
        f"archive: tasks/alpha: does not re-pack to the archive of row 0 of {TASKS}"]


def test_a_gzip_header_that_python_writes_is_ours(pristine: Path) -> None:
    """The canonical header is what the packer writes, and :func:`gz` writes it at level 9
    and mtime 0 (so the tests above differ from the packer only where they say)."""
    from termgrade.task.archive import (
        GZIP_HEADER,
        gunzip_packed,
        gzipped_as_packed,
        pack_task,
        tar_tree,
    )
    from termgrade.task.digest import read_tree

    task = pristine / "tasks" / "alpha"
    assert gz(tar_tree(read_tree(task))) == pack_task(task)
    packed = gz(b"tar stream")
    assert packed[:10] == GZIP_HEADER and gunzip_packed(packed) == b"tar stream"
    assert gunzip_packed(packed, max_bytes=9) is None  # expands past the cap
    assert gunzip_packed(packed[:-1]) is None  # truncated: no length trailer
    corrupt = bytearray(packed)
    corrupt[-5] ^= 1  # the length trailer no longer matches
    assert gunzip_packed(bytes(corrupt)) is None
    # The same judgement without inflating into memory (for the findings of a bad row).
    assert gzipped_as_packed(packed) and gzipped_as_packed(gz(bytes(3 << 20)))
    assert not any(map(gzipped_as_packed, [packed[:-1], bytes(corrupt), packed + packed,
                                           gz(b"x", level=1), b""]))


def test_changed_file_mode_in_the_tree(repo: Path) -> None:
    (repo / "tasks" / "bravo" / "tests" / "test.sh").chmod(0o700)
    findings = validate_repo(repo, load=False, secrets=False).findings
    assert [str(f) for f in findings] == [
        f"archive: tasks/bravo: differs from the manifest of row 1 of {TASKS}"]
