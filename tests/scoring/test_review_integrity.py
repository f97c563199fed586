"""The review of an agent's writes, on real overlay-shaped directories.

Each case builds an image layer (``lower``) and a writable layer (``upper``) on disk the
way the kernel's overlayfs leaves them: whiteouts are 0/0 character devices, a directory
made anew carries the opaque xattr.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import MAX_RELATIVE_BYTES, LowerView, walk_upper
from termgrade.scoring.review.integrity import review_layer
from tests.support.overlay_layers import POLICY, put, review, whiteout


@pytest.fixture
def layers(tmp_path: Path) -> tuple[Path, Path]:
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    for path in ("/usr/bin/bash", "/usr/bin/timeout", "/etc/passwd", "/app/data/old.csv",
                 "/opt/venv/lib/python3.11/site-packages/_pytest/main.py",
                 "/opt/scripts/backup.sh", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                 "/etc/ld.so.cache", "/usr/lib/python3.11/os.py"):
        put(lower, path)
    for directory in ("/app", "/tmp", "/usr/local/bin", "/srv/shop"):
        put(lower, directory, None)
    upper.mkdir()
    return lower, upper


def test_work_anywhere_outside_the_closure_is_carried_not_flagged(
        layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    work = ["/app/out.txt", "/app/conftest.py", "/app/__pycache__/m.cpython-311.pyc",
            "/tmp/scratch/x.bin", "/root/.bash_history", "/opt/scripts/backup.sh",
            "/opt/tool/run.sh", "/etc/cron.d/job", "/etc/passwd",
            "/var/git/repo.git/hooks/post-receive", "/solution/result.txt",
            "/usr/local/bin/mytool", "/usr/lib/x86_64-linux-gnu/libnew.so.1",
            "/usr/local/lib/python3.11/site-packages-not-on-path/x.py"]
    put(upper, "/app", None)
    (upper / "app").chmod((lower / "app").stat().st_mode & 0o7777)
    for path in work:
        put(upper, path, "the agent's")  # not the image's bytes: a copy-up is no change
    findings, carried, deleted = review(lower, upper)
    assert findings == []
    assert set(work) <= set(carried)
    assert carried.index("/opt/tool") < carried.index("/opt/tool/run.sh")  # parents first
    assert "/app" not in carried  # copied up unchanged: the scoring container has it
    assert deleted == []


@pytest.mark.parametrize(("build", "expected"), [
    (lambda u: put(u, "/usr/local/bin/bash", mode=0o755), "A /usr/local/bin/bash"),
    (lambda u: put(u, "/usr/local/bin/python3", mode=0o755), "A /usr/local/bin/python3"),
    (lambda u: put(u, "/usr/bin/timeout", "evil"), "C /usr/bin/timeout"),
    (lambda u: whiteout(u, "/usr/bin/bash"), "D /usr/bin/bash"),
    (lambda u: put(u, "/usr/bin/timeout/inner"), "T /usr/bin/timeout"),
    (lambda u: put(u, "/opt/venv/lib/python3.11/site-packages/zz.dist-info/entry_points.txt"),
     "A /opt/venv/lib/python3.11/site-packages/zz.dist-info"),
    (lambda u: put(u, "/usr/lib/python3.11/pytest/__init__.py"), "A /usr/lib/python3.11/pytest"),
    (lambda u: put(u, "/usr/lib/python3/dist-packages/evil.pth"),
     "A /usr/lib/python3/dist-packages/evil.pth"),
    (lambda u: put(u, "/etc/python3.11/sitecustomize.py", "import evil"),
     "A /etc/python3.11/sitecustomize.py"),
    (lambda u: put(u, "/etc/ld.so.preload", "/app/evil.so"), "A /etc/ld.so.preload"),
    (lambda u: put(u, "/usr/lib/x86_64-linux-gnu/libz.so.1", "evil"),
     "C /usr/lib/x86_64-linux-gnu/libz.so.1"),
    (lambda u: put(u, "/logs/verifier/reward.txt", "1"), "A /logs/verifier/reward.txt"),
    (lambda u: put(u, "/tests/conftest.py"), "A /tests/conftest.py"),
    (lambda u: whiteout(u, "/usr/lib"), "D /usr/lib"),
])
def test_a_change_to_the_closure_or_the_graders_paths_is_a_finding(
        layers: tuple[Path, Path], build: object, expected: str) -> None:
    lower, upper = layers
    build(upper)  # type: ignore[operator]
    findings, carried, deleted = review(lower, upper)
    assert any(f.startswith(expected + ":") for f in findings), findings
    named = expected.split(" ", 1)[1]
    assert named not in carried and named not in deleted


def test_a_file_replaced_by_a_directory_is_not_hidden_by_its_children(
        layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    put(upper, "/usr/bin/timeout/a")
    put(upper, "/usr/bin/timeout/b")
    findings, _, _ = review(lower, upper)
    assert "T /usr/bin/timeout: changed in type in the verifier's closure (what the " \
           "verifier runs)" in findings


def test_copied_up_directories_bytecode_caches_and_the_loader_cache_are_no_change(
        layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    put(upper, "/usr/local/bin", None)  # copied up with the image's mode and owner
    (upper / "usr/local/bin").chmod((lower / "usr/local/bin").stat().st_mode & 0o7777)
    (upper / "usr").chmod((lower / "usr").stat().st_mode & 0o7777)
    (upper / "usr/local").chmod((lower / "usr/local").stat().st_mode & 0o7777)
    put(upper, "/opt/venv/lib/python3.11/site-packages/_pytest/__pycache__/main.cpython-311.pyc")
    put(upper, "/etc/ld.so.cache", "rebuilt by ldconfig")
    for directory in ("opt", "opt/venv", "opt/venv/lib", "opt/venv/lib/python3.11",
                      "opt/venv/lib/python3.11/site-packages",
                      "opt/venv/lib/python3.11/site-packages/_pytest", "etc"):
        (upper / directory).chmod((lower / directory).stat().st_mode & 0o7777)
    findings, carried, _ = review(lower, upper)
    assert findings == [] and carried == []


def test_a_closure_directory_whose_mode_changed_is_a_finding(layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    put(upper, "/opt/venv", None, mode=0o777)
    findings, _, _ = review(lower, upper)
    assert any(f.startswith("C /opt/venv:") for f in findings), findings


def test_deletions_outside_the_closure_are_replayed(layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    whiteout(upper, "/app/data/old.csv")
    put(upper, "/srv/shop", None)
    os.setxattr(upper / "srv/shop", "trusted.overlay.opaque", b"y")
    put(upper, "/srv/shop/new.txt")
    findings, carried, deleted = review(lower, upper)
    assert findings == []
    assert sorted(deleted) == ["/app/data/old.csv", "/srv/shop"]
    assert "/srv/shop/new.txt" in carried and "/app/data/old.csv" not in carried


def test_a_sparse_file_counts_at_its_apparent_size(layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    target = put(upper, "/app/hole.bin", "")
    with open(target, "r+b") as handle:
        handle.truncate(1 << 30)  # 1 GiB apparent, no blocks
    result = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY)
    assert result.carried_bytes >= 1 << 30


def test_nesting_past_the_limit_is_a_finding_not_a_crash(layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    deep = upper / "app"
    levels = MAX_RELATIVE_BYTES // 100 + 2
    os.makedirs(deep, exist_ok=True)
    fd = os.open(deep, os.O_RDONLY)
    for _ in range(levels * 2):  # past PATH_MAX, built by descriptors
        os.mkdir("d" * 99, dir_fd=fd)
        child = os.open("d" * 99, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    findings, _, _ = review(lower, upper)
    assert any(f.startswith("! /app/") and "nested past" in f for f in findings), findings


def test_engine_paths_are_neither_findings_nor_carried(layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    put(upper, "/usr/sbin/docker-init")
    findings, carried, _ = review(lower, upper, grader=("/usr/sbin/docker-init",))
    assert findings == [] and "/usr/sbin/docker-init" not in carried


@pytest.mark.slow
def test_review_looks_below_per_directory_and_per_file_only_in_image_directories(
        layers: tuple[Path, Path]) -> None:
    """Linear in the entries walked: one look below per directory; a file is looked up
    only where the image has its directory (it may be the image's file copied up as it
    was, which is no change), never below a directory the agent made."""
    lower, upper = layers
    for i in range(3000):
        put(upper, f"/app/made/f{i}")
    for i in range(300):
        put(upper, f"/app/f{i}")
    put(upper, "/etc/new.conf")

    class Counting(LowerView):
        calls = 0

        def _find(self, path: str) -> tuple[str, os.stat_result] | None:
            Counting.calls += 1
            return super()._find(path)

    result = review_layer(walk_upper(str(upper)), Counting([str(lower)]), POLICY)
    assert result.entries == 3304 and len(result.carried) == 3302  # not /app, /etc
    assert Counting.calls <= 300 + 1 + 12  # /app's files, /etc's, a few per directory


def test_findings_are_capped_but_counted(layers: tuple[Path, Path]) -> None:
    lower, upper = layers
    for i in range(120):
        put(upper, f"/usr/lib/python3.11/planted/f{i}")
    findings, _, _ = review(lower, upper)
    assert len(findings) == 51 and findings[-1].startswith("... and ")
