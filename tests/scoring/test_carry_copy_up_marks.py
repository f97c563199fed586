"""An image file the agent moved or hard-linked into its answer (round 12's honest zero):
A's overlay marks such a copy-up with where it came from (``trusted.overlay.origin``).
Moved into B's layer with the mark, B's overlay followed it, and where the image's file
stayed visible in B (its deletion left out: an input) the tests' read of the answer failed
with ``ESTALE`` (0 when graded, 1 when regraded, which copies without the mark). The carry
drops the copy-up marks of every file it moves, alone or inside a moved directory; an
opaque directory's own mark stays. Control: the drop patched out, the mark reaches B.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import UpperEntry
from termgrade.scoring.review import carry
from termgrade.scoring.review.carry import LayerWriter

ORIGIN = "trusted.overlay.origin"


def _marked(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("genuine\n")
    try:
        os.setxattr(path, ORIGIN, b"\x00\xfb\x21")
    except OSError as exc:  # a filesystem without trusted.* attributes
        pytest.skip(f"no trusted.* xattrs here: {exc}")
    return path


def _layers(tmp_path: Path) -> tuple[Path, Path]:
    source, target = tmp_path / "a-upper", tmp_path / "b-upper"
    source.mkdir()
    target.mkdir()
    return source, target


@pytest.mark.parametrize("drop", [True, False])
def test_a_moved_files_copy_up_mark_does_not_reach_b(tmp_path: Path, drop: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    source, target = _layers(tmp_path)
    moved = _marked(source / "app" / "release.txt")
    if not drop:  # the control
        monkeypatch.setattr(carry, "_drop_copy_up_marks", lambda host: None)
    writer = LayerWriter(str(target), str(source))
    writer.carry(UpperEntry("/app/release.txt", str(moved), 0o100644, 0, 0))
    landed = target / "app" / "release.txt"
    assert landed.read_text() == "genuine\n"
    assert (ORIGIN in os.listxattr(landed)) is not drop


@pytest.mark.parametrize("drop", [True, False])
def test_a_file_inside_a_moved_directory_loses_its_mark_too(
        tmp_path: Path, drop: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    source, target = _layers(tmp_path)
    _marked(source / "app" / "out" / "deep" / "release.txt")
    (target / "app").mkdir()
    if not drop:
        monkeypatch.setattr(carry, "_drop_copy_up_marks", lambda host: None)
    writer = LayerWriter(str(target), str(source))
    assert writer.move_tree(UpperEntry("/app/out", str(source / "app" / "out"), 0o40755, 0, 0))
    landed = target / "app" / "out" / "deep" / "release.txt"
    assert (ORIGIN in os.listxattr(landed)) is not drop
