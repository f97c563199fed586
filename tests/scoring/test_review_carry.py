"""The carry: the agent's reviewed work replayed into the scoring container's layer.

On real overlay-shaped directories (whiteouts are 0/0 character devices, an opaque
directory carries ``trusted.overlay.opaque``), as the grader writes them before the
scoring container starts. The end-to-end view through the kernel's overlay is in
``test_grading_carry_docker.py``.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.errors import CarryError
from termgrade.scoring.review import carry
from termgrade.scoring.review.carry import LayerWriter, carry_work
from termgrade.scoring.review.integrity import review_layer
from tests.support.overlay_layers import POLICY, put, review, whiteout


@pytest.fixture
def layers(tmp_path: Path) -> tuple[Path, Path, Path]:
    lower, upper, target = tmp_path / "lower", tmp_path / "upper", tmp_path / "target"
    for path in ("/usr/bin/bash", "/app/data/old.csv", "/srv/shop/a.txt", "/etc/passwd"):
        put(lower, path)
    upper.mkdir()
    target.mkdir()
    return lower, upper, target


def carried(lower: Path, upper: Path, target: Path) -> LayerWriter:
    result = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY)
    assert result.all_findings() == []
    writer = carry_work(str(target), (str(upper), [str(lower)]), result)
    writer.finish()
    return writer


def test_files_are_moved_with_their_metadata_and_directories_keep_theirs(
        layers: tuple[Path, Path, Path]) -> None:
    lower, upper, target = layers
    tool = put(upper, "/opt/tool/bin/run.sh", "#!/bin/sh\necho hi\n")
    os.chown(tool, 1234, 2345)
    tool.chmod(0o4750)  # after the chown, which clears set-user-ID
    (upper / "opt/tool").chmod(0o710)
    os.chown(upper / "opt/tool", 1234, 0)
    os.link(tool, upper / "opt/tool/bin/same.sh")
    os.symlink("../bin/run.sh", upper / "opt/tool/link")
    os.chown(upper / "opt/tool/link", 7, 8, follow_symlinks=False)
    os.utime(upper / "opt/tool", ns=(1_000_000_000, 1_000_000_000))

    inode = os.lstat(tool).st_ino
    passwd = put(upper, "/etc/passwd", "root:x:0:0::/root:/bin/bash\n")  # /etc: unchanged
    stats = carried(lower, upper, target).stats

    out = target / "opt/tool/bin/run.sh"
    assert out.read_text() == "#!/bin/sh\necho hi\n"
    assert os.lstat(out).st_ino == inode and not tool.exists()  # moved, no data copied
    assert os.lstat(out).st_nlink == 2  # the agent's two names, and no more
    assert stat.S_IMODE(out.stat().st_mode) == 0o4750 and out.stat().st_uid == 1234
    assert os.lstat(target / "opt/tool/bin/same.sh").st_ino == inode
    made = os.lstat(target / "opt/tool")
    assert (stat.S_IMODE(made.st_mode), made.st_uid) == (0o710, 1234)
    assert made.st_mtime_ns == 1_000_000_000  # set after its children were made
    link = os.lstat(target / "opt/tool/link")
    assert stat.S_ISLNK(link.st_mode) and os.readlink(target / "opt/tool/link") == "../bin/run.sh"
    assert (link.st_uid, link.st_gid) == (7, 8)
    # /opt is new and /etc copied up as the image had it: one rename carries each
    assert (stats.trees, stats.moved, stats.symlinks) == (2, 0, 0)
    assert stat.S_IMODE(os.lstat(target / "etc").st_mode) == stat.S_IMODE(
        os.lstat(lower / "etc").st_mode)
    assert (target / "etc/passwd").read_text().startswith("root:") and not passwd.exists()


def test_deletions_are_replayed_as_the_whiteouts_and_opaque_directories_they_were(
        layers: tuple[Path, Path, Path]) -> None:
    lower, upper, target = layers
    whiteout(upper, "/app/data/old.csv")
    (upper / "app").chmod(0o755)
    put(upper, "/srv/shop", None)
    os.setxattr(upper / "srv/shop", "trusted.overlay.opaque", b"y")
    put(upper, "/srv/shop/new.txt")
    put(upper, "/srv/fake", None)
    os.setxattr(upper / "srv/fake", "user.overlay.opaque", b"y")  # the agent can set this

    carried(lower, upper, target)

    gone = os.lstat(target / "app/data/old.csv")
    assert stat.S_ISCHR(gone.st_mode) and gone.st_rdev == 0
    assert os.getxattr(target / "srv/shop", "trusted.overlay.opaque") == b"y"
    assert (target / "srv/shop/new.txt").read_text() == "x"
    # the kernel ignores a user.overlay mark on a rootful overlay: not replayed as one
    with pytest.raises(OSError):
        os.getxattr(target / "srv/fake", "trusted.overlay.opaque")


def test_fifos_and_devices_are_not_carried(layers: tuple[Path, Path, Path]) -> None:
    lower, upper, target = layers
    put(upper, "/app", None)
    os.mkfifo(upper / "app/pipe")
    os.mknod(upper / "app/null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    put(upper, "/app/new", None)
    os.mkfifo(upper / "app/new/pipe")
    put(upper, "/app/new/kept.txt")
    stats = carried(lower, upper, target).stats
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == [
        "app", "app/new", "app/new/kept.txt"]
    # /app moves as one piece; the FIFOs and the device it took along go back
    assert (stats.trees, stats.held) == (1, 3)


def test_what_a_moved_tree_took_along_and_the_review_held_goes_back(
        layers: tuple[Path, Path, Path]) -> None:
    lower, upper, target = layers
    put(lower, "/opt/venv/lib/python3.11/site-packages/_pytest/main.py")
    put(upper, "/opt/venv/lib/python3.11/site-packages/evil.pth", "import os\n")
    put(upper, "/opt/mine/tool.sh")
    result = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY)
    assert any("evil.pth" in f for f in result.all_findings())
    stats = carry_work(str(target), (str(upper), [str(lower)]), result).finish()
    assert (target / "opt/mine/tool.sh").exists()
    assert not (target / "opt/venv").exists()
    assert not [p for p in target.rglob("*") if p.name == "evil.pth"]
    assert [p for p in upper.rglob("evil.pth")]  # held in the agent's layer
    assert (stats.trees, stats.held) == (1, 1)  # /opt moved, /opt/venv went back


def test_a_parent_that_is_not_a_directory_in_the_target_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", target / "opt")
    writer = LayerWriter(str(target))
    with pytest.raises(CarryError, match="/opt is not a directory"):
        writer.file("/opt/x/config.json", b"{}")
    assert os.listdir(tmp_path / "elsewhere") == []


def test_the_grader_files_get_the_images_parent_metadata(tmp_path: Path) -> None:
    lower, target = tmp_path / "lower", tmp_path / "target"
    put(lower, "/run", None, mode=0o1777)
    target.mkdir()
    writer = LayerWriter(str(target), None, LowerView([str(lower)]))
    writer.directory("/run/termgrade", 0o700, 0, 0)
    writer.file("/run/termgrade/attest.json", b"{}", mode=0o600)
    writer.finish()
    assert stat.S_IMODE(os.lstat(target / "run").st_mode) == 0o1777
    assert stat.S_IMODE(os.lstat(target / "run/termgrade").st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(target / "run/termgrade/attest.json").st_mode) == 0o600


@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_a_directory_above_the_closure_replaced_by_another_type_is_a_finding(
        layers: tuple[Path, Path, Path], kind: str) -> None:
    """``/usr/lib`` made a symlink to the agent's copy would put the agent's libraries
    (and, through the symlink, the mount points) under the verifier."""
    lower, upper, _ = layers
    put(lower, "/usr/lib/python3.11/os.py")
    put(upper, "/usr", None)
    if kind == "symlink":
        os.symlink("/app/lib", upper / "usr/lib")
    else:
        put(upper, "/usr/lib", "not a directory")
    findings, carried_paths, _ = review(lower, upper)
    assert any(f.startswith("C /usr/lib:") or " /usr/lib:" in f for f in findings), findings
    assert "/usr/lib" not in carried_paths


@pytest.mark.slow
def test_parents_many_levels_deep_are_made_without_recursion(
        layers: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain deeper than Python's recursion limit, carried entry by entry (the layers
    refuse moves, as XFS project quotas do; played by a stand-in for ``os.rename``)."""
    monkeypatch.setattr(carry.os, "rename", refuse_moves)
    lower, upper, target = layers
    chain = "/app/" + "/".join(["d"] * 1100)
    for root in (lower, upper):
        subprocess.run(["mkdir", "-p", f"{root}{chain}"], check=True)  # pathlib recurses
    (lower / chain.lstrip("/") / "old.txt").write_text("x")
    os.mknod(upper / chain.lstrip("/") / "old.txt", stat.S_IFCHR, os.makedev(0, 0))
    try:
        stats = carried(lower, upper, target).stats
        assert stats.whiteouts == 1 and stats.trees == 0
        assert stat.S_ISCHR(os.lstat(target / chain.lstrip("/") / "old.txt").st_mode)
    finally:  # pytest's own clean-up recurses once per level
        subprocess.run(["rm", "-rf", str(lower), str(upper), str(target)], check=True)


def refuse_moves(source: str, target: str) -> None:
    raise OSError(errno.EXDEV, "Invalid cross-device link", source)


def test_layers_that_refuse_moves_between_them_get_copies(
        layers: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """XFS refuses a rename across project-quota trees (EXDEV), which is how the engine
    enforces ``storage_mb`` there: the carry copies instead (no XFS here, so the refusal
    is played by a stand-in for ``os.rename``)."""
    monkeypatch.setattr(carry.os, "rename", refuse_moves)
    lower, upper, target = layers
    put(upper, "/opt/tool/bin/run.sh", "#!/bin/sh\n", mode=0o755)
    put(upper, "/opt/tool/data.txt", "data")
    stats = carried(lower, upper, target).stats
    assert (stats.trees, stats.moved, stats.copied) == (0, 0, 2)
    assert (target / "opt/tool/data.txt").read_text() == "data"
    assert stat.S_IMODE((target / "opt/tool/bin/run.sh").stat().st_mode) == 0o755


def test_a_changed_directory_above_an_unchanged_one_moves_in_walk_order(
        layers: tuple[Path, Path, Path]) -> None:
    """/srv's mode changed (carried), /srv/shop copied up as it was (unchanged): one move
    of /srv, never /srv/shop first and /srv onto it (ENOTEMPTY)."""
    lower, upper, target = layers
    put(upper, "/srv/shop/a.txt", "edited")
    (upper / "srv/shop").chmod(stat.S_IMODE((lower / "srv/shop").stat().st_mode))
    (upper / "srv").chmod(0o700)
    stats = carried(lower, upper, target).stats
    assert (target / "srv/shop/a.txt").read_text() == "edited"
    assert stat.S_IMODE((target / "srv").stat().st_mode) == 0o700
    assert stats.trees == 1
