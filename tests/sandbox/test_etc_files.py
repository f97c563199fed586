"""The /etc files of containers made without networking: what a gone owner left is swept,
nothing of a live owner or of a container that still exists."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from termgrade.sandbox import etc_files
from termgrade.sandbox.ownership import owner_id


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(etc_files, "ROOT", tmp_path)
    return tmp_path


def test_files_are_the_engines_and_forget_leaves_nothing(root: Path) -> None:
    mounts = etc_files.etc_mounts("termgrade-run-1", "abc123")
    assert set(mounts) == {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"}
    assert Path(mounts["/etc/hosts"]).read_text().startswith("127.0.0.1\tlocalhost\n")
    assert Path(mounts["/etc/hostname"]).read_text() == "abc123\n"
    etc_files.forget("termgrade-run-1")
    assert list(root.iterdir()) == []


def test_sweep_removes_only_what_gone_owners_left(root: Path) -> None:
    gone = root / f"{socket.gethostname()}:4194303:1"  # past pid_max: no such process
    other_host = root / "elsewhere:1:1"
    for home in (gone / "termgrade-run-gone", gone / "termgrade-run-kept",
                 other_host / "termgrade-run-x"):
        home.mkdir(parents=True)
        (home / "hosts").write_text("x")
    etc_files.etc_mounts("termgrade-run-mine", "h")
    assert etc_files.sweep({"termgrade-run-kept"}) == 1
    assert not (gone / "termgrade-run-gone").exists()
    assert (gone / "termgrade-run-kept" / "hosts").exists()  # its container still exists
    assert (other_host / "termgrade-run-x").exists()  # unknown whether its owner lives
    assert (root / owner_id() / "termgrade-run-mine").exists()  # this process lives
    assert etc_files.sweep(set()) == 1
    assert not gone.exists()


def test_an_unwritable_root_is_a_sandbox_error_naming_it(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.sandbox.docker_sandbox import DockerSandbox
    from termgrade.sandbox.errors import SandboxError

    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setattr(etc_files, "ROOT", blocked)
    with pytest.raises(SandboxError, match=r"a-file.*writable directory"):
        DockerSandbox.create("termgrade/base:local", label="etc")
