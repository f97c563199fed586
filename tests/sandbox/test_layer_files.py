"""Reading a container's outputs from its writable layer on the host
(:mod:`termgrade.sandbox.layer_files`): what the container's processes planted there (a
symlink out of the layer, a FIFO, a device) is never followed, opened for reading or
waited on. The layer here is a plain directory shaped like one (as root: ``mknod``)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path, PurePosixPath

import pytest

from termgrade.sandbox.errors import SandboxError
from termgrade.sandbox.layer_files import MAX_ENTRIES, read_layer_files

OUT = PurePosixPath("/logs/verifier")


def _layer(tmp_path: Path) -> tuple[Path, Path]:
    upper = tmp_path / "upper"
    out = upper / "logs" / "verifier"
    out.mkdir(parents=True)
    return upper, out


def _read(upper: Path, max_bytes: int = 1 << 20) -> dict[str, bytes]:
    """The read, on a thread: a read that waits on a FIFO fails the test, never hangs it."""
    box: dict[str, object] = {}

    def _run() -> None:
        try:
            box["files"] = read_layer_files(str(upper), OUT, max_bytes=max_bytes)
        except Exception as exc:  # handed to the test
            box["error"] = exc

    worker = threading.Thread(target=_run, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the read blocked"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["files"]  # type: ignore[return-value]


def test_regular_files_are_read_with_their_relative_paths(tmp_path: Path) -> None:
    upper, out = _layer(tmp_path)
    (out / "reward.txt").write_text("1\n")
    (out / "sub").mkdir()
    (out / "sub" / "ctrf.json").write_bytes(b"{}")
    assert _read(upper) == {"reward.txt": b"1\n", "sub/ctrf.json": b"{}"}


def test_no_directory_there_reads_as_nothing(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    upper.mkdir()
    assert _read(upper) == {}


def test_a_symlinked_file_is_not_followed_out_of_the_layer(tmp_path: Path) -> None:
    upper, out = _layer(tmp_path)
    host = tmp_path / "host-secret"
    host.write_text("1\n")
    (out / "reward.txt").symlink_to(host)
    (out / "twin.txt").write_text("0\n")  # the defanged twin: a plain file is read
    assert _read(upper) == {"twin.txt": b"0\n"}


def test_a_symlinked_directory_is_not_followed(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    (upper / "logs").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "reward.txt").write_text("1\n")
    (upper / "logs" / "verifier").symlink_to(elsewhere)
    assert _read(upper) == {}
    # a symlinked parent of the path too
    upper2 = tmp_path / "upper2"
    upper2.mkdir()
    (elsewhere / "verifier").mkdir()
    (elsewhere / "verifier" / "reward.txt").write_text("1\n")
    (upper2 / "logs").symlink_to(elsewhere)
    assert _read(upper2) == {}


def test_fifos_and_devices_are_skipped_without_opening_them(tmp_path: Path) -> None:
    upper, out = _layer(tmp_path)
    os.mkfifo(out / "reward.txt")  # opened for reading, it would wait for a writer
    os.mknod(out / "disk", 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    os.mknod(out / "whiteout", stat.S_IFCHR, os.makedev(0, 0))
    (out / "junit.xml").write_text("<x/>")
    assert _read(upper) == {"junit.xml": b"<x/>"}


def test_past_the_byte_bound_is_refused(tmp_path: Path) -> None:
    upper, out = _layer(tmp_path)
    (out / "a").write_bytes(b"x" * 600)
    (out / "b").write_bytes(b"x" * 600)
    with pytest.raises(SandboxError, match="more than 1000 bytes"):
        _read(upper, max_bytes=1000)
    assert set(_read(upper, max_bytes=1200)) == {"a", "b"}


def test_past_the_entry_bound_is_refused(tmp_path: Path) -> None:
    upper, out = _layer(tmp_path)
    for i in range(MAX_ENTRIES + 1):
        (out / f"f{i}").touch()
    with pytest.raises(SandboxError, match="entries"):
        _read(upper)
    os.unlink(out / "f0")
    assert len(_read(upper)) == MAX_ENTRIES
