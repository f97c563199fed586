"""An image directory in the reference's footprint stands for itself alone.

Round 8 of the cold attacks: once a directory's mode change was recorded (a reference
that runs ``chmod 755 /srv/data``), the footprint's ``/srv/data`` became a root over all
the image had in it, and an agent rewrote the input ``/srv/data/numbers.txt`` there and
scored 1. The review now records what changed inside an image directory path by path
(``review/integrity.py``: ``_Tops.changed(covers=False)``), and the transfer set asks for
such a directory alone (``reference-dir``); what the reference changed in it is asked
for path by path, and a new directory the reference made still stands for all of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review import transfer as transfer_mod
from termgrade.scoring.review.integrity import review_layer
from termgrade.scoring.review.transfer import TransferSet, derive_transfer_set
from termgrade.task import load_task
from tests.support.overlay_layers import POLICY, put
from tests.support.task_dirs import write_task

INSTRUCTION = ("Make /srv/data/numbers.txt readable and count its numbers into "
               "/app/count.txt.\n")


@pytest.fixture
def view(tmp_path: Path) -> Path:
    view = tmp_path / "image"
    put(view, "/srv/data/numbers.txt", "1\n2\n3\n")
    put(view, "/srv/data/notes.txt", "n\n")
    (view / "srv/data").chmod(0o700)
    put(view, "/app", None)
    return view


def _footprint(view: Path, tmp_path: Path) -> list[str]:
    """What the reference's run records: chmod of the image dir, one file in it edited,
    a new tree."""
    upper = tmp_path / "ref-upper"
    put(upper, "/srv/data", None, mode=0o755)
    put(upper, "/srv/data/notes.txt", "edited\n")
    put(upper, "/opt/tool/bin/run", "#!/bin/sh\n", mode=0o755)
    put(upper, "/app/count.txt", "3\n")
    review = review_layer(walk_upper(str(upper)), LowerView([str(view)]), POLICY)
    return review.footprint


def _set(view: Path, tmp_path: Path, footprint: list[str]) -> TransferSet:
    root = write_task(tmp_path / "task", instruction=INSTRUCTION)
    return derive_transfer_set(load_task(root), workdir="/app", view=str(view),
                               reference=ReferenceRecord(task_digest="d", footprint=footprint))


def test_the_footprint_records_what_changed_in_an_image_directory_path_by_path(
        view: Path, tmp_path: Path) -> None:
    footprint = _footprint(view, tmp_path)
    assert {"/srv/data", "/srv/data/notes.txt", "/opt"} <= set(footprint)
    assert "/opt/tool" not in footprint  # a new tree stands for all of it


def test_a_reference_dir_root_asks_for_the_directory_alone(view: Path, tmp_path: Path) -> None:
    transfer = _set(view, tmp_path, _footprint(view, tmp_path))
    why = {r.path: r.why for r in transfer.roots}
    assert why["/srv/data"] == "reference-dir" and why["/srv/data/notes.txt"] == "reference"
    assert transfer.carries_changes("/srv/data")  # the reference's chmod: carried
    assert transfer.carries_changes("/srv/data/notes.txt")  # what it edited there
    # the input the instruction names, below the directory the reference chmodded
    assert why["/srv/data/numbers.txt"] == "input"
    assert not transfer.carries_changes("/srv/data/numbers.txt")
    assert transfer.carries_created("/opt/tool/bin/run")  # created: carried anywhere
    # an agent that rewrites the input, chmods the directory as the reference did, and
    # edits the file the reference edited: only the input stays out
    upper = tmp_path / "agent-upper"
    put(upper, "/srv/data", None, mode=0o755)
    put(upper, "/srv/data/numbers.txt", "9\n")
    put(upper, "/srv/data/notes.txt", "mine\n")
    carried = {e.path for e in review_layer(walk_upper(str(upper)), LowerView([str(view)]),
                                            POLICY, transfer=transfer).carried}
    assert "/srv/data/numbers.txt" not in carried
    assert {"/srv/data", "/srv/data/notes.txt"} <= carried


def test_the_rule_patched_out_carries_the_rewritten_input(
        view: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transfer_mod, "_reference_why", lambda path, view: "reference")
    transfer = _set(view, tmp_path, ["/srv/data", "/app/count.txt"])
    assert transfer.carries_changes("/srv/data/numbers.txt")
