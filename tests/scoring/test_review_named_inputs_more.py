"""Named inputs, the whole class (round 8 of the cold attacks forged passes through the edges
of the file-only rule): with a recorded reference run, an image path the instruction or the
tests name that the reference left as it was is an input, followed through the image's own
links inside the image's view, and the deepest root around a changed image file decides
whether the change is carried:

1. a named input *directory* (``/srv/data/``): an image file in it is not carried;
2. a named image *link* (a checker ``/usr/local/bin/check-factors`` to
   ``/opt/checker/check.py``): neither the link nor its target is asked for;
3. a named path through an *absolute* image link (``/srv/abs -> /data``): resolved in the
   view, not on the host (where it pointed out of the view and found nothing);
4. a named input or a file the tests name (ground truth) in the *working directory*: the
   input wins over the workdir around it.

Honest twins: what the agent created is carried anywhere (inside an input too); an image
file nobody names in the workdir stays carried; a root inside an input (a path the
reference changed, a declared artifact) is carried; a named directory in which the reference
changed an image file stays asked whole; without a reference record nothing changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review import transfer as transfer_mod
from termgrade.scoring.review.integrity import review_layer
from termgrade.scoring.review.transfer import TransferRoot, TransferSet, derive_transfer_set
from termgrade.task import load_task
from tests.support.overlay_layers import POLICY, put
from tests.support.task_dirs import write_task

INSTRUCTION = ("The input data lives in `/srv/data/`. The numbers are in /app/numbers.txt "
               "and more in /srv/abs/more.txt. Check your answer with "
               "`/usr/local/bin/check-factors /app/result.txt` (do not modify the checker). "
               "Write the result to /app/result.txt.\n")
TESTS = ("import json\nfrom pathlib import Path\n\n\ndef test_result():\n"
         "    want = json.loads(Path('/app/expected.json').read_text())\n"
         "    assert Path('/app/result.txt').read_text().strip() == str(want)\n"
         "    assert Path('/app/src').is_dir()\n")
REFERENCE = ReferenceRecord(task_digest="d", footprint=["/app/result.txt"])
ATTACK = ("/srv/data/numbers.txt", "/opt/checker/check.py", "/usr/local/bin/check-factors",
          "/data/more.txt", "/app/numbers.txt", "/app/expected.json")
"""The image files the attacks rewrite: each named (or inside a named path) and left as it
was by the reference."""


@pytest.fixture
def view(tmp_path: Path) -> Path:
    view = tmp_path / "image"
    put(view, "/srv/data/numbers.txt", "1\n2\n")
    put(view, "/opt/checker/check.py", "import sys\n", mode=0o755)
    put(view, "/usr/local/bin", None)
    os.symlink("/opt/checker/check.py", view / "usr/local/bin/check-factors")
    put(view, "/data/more.txt", "3\n")
    os.symlink("/data", view / "srv/abs")  # absolute: on the host it leaves the view
    put(view, "/app/numbers.txt", "4\n")
    put(view, "/app/expected.json", "10\n")
    put(view, "/app/lib.py", "X = 1\n")
    put(view, "/app/src/main.py", "print(1)\n")
    return view


def _set(tmp_path: Path, view: Path, reference: ReferenceRecord | None, *,
         instruction: str = INSTRUCTION, toml: str = "") -> TransferSet:
    root = write_task(tmp_path / "task", instruction=instruction, tests=TESTS, toml=toml)
    return derive_transfer_set(load_task(root), workdir="/app", reference=reference,
                               view=str(view))


def _carried(view: Path, tmp_path: Path, transfer: TransferSet,
             extra: dict[str, str] | None = None) -> set[str]:
    upper = tmp_path / "upper"
    for path in ATTACK:
        put(upper, path, "2\n")
    put(upper, "/app/lib.py", "X = 2\n")           # an image file in the workdir nobody names
    put(upper, "/app/src/main.py", "print(2)\n")   # inside a directory only the tests name
    put(upper, "/app/result.txt", "2\n")           # created: the answer
    put(upper, "/srv/data/mine.txt", "mine\n")     # created inside an input directory
    for path, data in (extra or {}).items():
        put(upper, path, data)
    review = review_layer(walk_upper(str(upper)), LowerView([str(view)]), POLICY,
                          transfer=transfer)
    return {e.path for e in review.carried}


HONEST = {"/app/lib.py", "/app/src/main.py", "/app/result.txt", "/srv/data/mine.txt"}


def test_every_edge_of_a_named_input_stays_the_images(view: Path, tmp_path: Path) -> None:
    transfer = _set(tmp_path, view, REFERENCE)
    why = {r.path: r.why for r in transfer.roots}
    assert why["/srv/data"] == "input"                                       # 1: a directory
    assert why["/usr/local/bin/check-factors"] == why["/opt/checker/check.py"] == "input"  # 2
    assert why["/srv/abs/more.txt"] == why["/data/more.txt"] == "input"      # 3: absolute link
    assert why["/app/numbers.txt"] == why["/app/expected.json"] == "input"   # 4: the workdir
    assert why["/app"] == "workdir" and why["/app/src"] == "tests"
    carried = _carried(view, tmp_path, transfer)
    assert not carried & set(ATTACK)
    assert carried >= HONEST
    for path in ATTACK:
        assert not transfer.carries_changes(path) and transfer.tests_only(path)
    assert transfer.carries_changes("/app/lib.py") and transfer.carries_created(
        "/srv/data/mine.txt")


def test_without_a_reference_record_nothing_changes(view: Path, tmp_path: Path) -> None:
    transfer = _set(tmp_path, view, None)
    why = {r.path: r.why for r in transfer.roots}
    assert "input" not in why.values()
    assert why["/srv/data"] == why["/usr/local/bin/check-factors"] == "instruction"
    assert why["/app/expected.json"] == "tests"
    carried = _carried(view, tmp_path, transfer)
    # named paths and the workdir stay asked whole (what only the tests name outside the
    # workdir stays the image's, as before)
    assert {"/srv/data/numbers.txt", "/opt/checker/check.py", "/data/more.txt",
            "/app/numbers.txt", "/app/expected.json"} | HONEST <= carried


def test_a_reference_that_changed_the_named_path_keeps_it_asked(
        view: Path, tmp_path: Path) -> None:
    put(view, "/srv/data/notes.txt", "n\n")
    reference = ReferenceRecord(task_digest="d", footprint=[
        "/app/result.txt", "/srv/data/notes.txt", "/opt/checker/check.py", "/app/numbers.txt",
        "/data/more.txt"])
    transfer = _set(tmp_path, view, reference)
    why = {r.path: r.why for r in transfer.roots}
    # an image file the reference changed inside the named directory: the directory is the
    # task's workspace, asked whole (a second valid solution's edit of a sibling counts)
    assert why["/srv/data"] == "instruction"
    assert why["/usr/local/bin/check-factors"] == why["/opt/checker/check.py"] \
        == "instruction"  # its target was changed
    assert why["/srv/abs/more.txt"] == why["/data/more.txt"] == why["/app/numbers.txt"] \
        == "instruction"
    carried = _carried(view, tmp_path, transfer, {"/srv/data/notes.txt": "m\n"})
    assert {"/srv/data/numbers.txt", "/srv/data/notes.txt", "/opt/checker/check.py",
            "/data/more.txt", "/app/numbers.txt"} | HONEST <= carried
    assert "/app/expected.json" not in carried  # still only the tests': the image's


def test_what_the_reference_created_in_an_input_directory_is_carried(
        view: Path, tmp_path: Path) -> None:
    reference = ReferenceRecord(task_digest="d", footprint=["/app/result.txt",
                                                            "/srv/data/summary.txt"])
    toml = 'schema_version = "1.4"\nartifacts = ["/srv/data/report.txt"]\n'
    put(view, "/srv/data/report.txt", "old\n")
    transfer = _set(tmp_path, view, reference, toml=toml)
    why = {r.path: r.why for r in transfer.roots}
    assert why["/srv/data"] == "input"  # created only: no image file of it changed
    assert why["/srv/data/summary.txt"] == "reference"
    assert why["/srv/data/report.txt"] == "declared"
    carried = _carried(view, tmp_path, transfer, {"/srv/data/summary.txt": "s\n",
                                                  "/srv/data/report.txt": "new\n"})
    assert {"/srv/data/summary.txt", "/srv/data/report.txt"} | HONEST <= carried
    assert "/srv/data/numbers.txt" not in carried


def test_the_deepest_root_decides() -> None:
    transfer = TransferSet((
        TransferRoot("/app", "workdir"), TransferRoot("/app/data", "input"),
        TransferRoot("/app/data/out.txt", "reference"), TransferRoot("/app/data/sub", "tests"),
        TransferRoot("/app/data/ws", "workdir"), TransferRoot("/etc/shop", "instruction"),
        TransferRoot("/etc/shop/base.conf", "input")))
    assert transfer.carries_changes("/app/x.py")
    assert not transfer.carries_changes("/app/data/in.txt")
    assert not transfer.carries_changes("/app/data")
    assert transfer.carries_changes("/app/data/out.txt")
    assert not transfer.carries_changes("/app/data/sub/f")  # a tests root decides nothing
    assert transfer.carries_changes("/app/data/ws/f")
    assert transfer.asked("/etc/shop/other.conf") and not transfer.asked("/etc/shop/base.conf")
    assert not transfer.carries_changes("/etc/shop/base.conf")
    assert transfer.tests_only("/app/data/in.txt") and not transfer.tests_only("/app/x.py")
    assert not transfer.carries_changes("/srv/elsewhere")


def test_the_rule_patched_out_carries_every_attack(
        view: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transfer_mod, "_left_alone", lambda *args, **kwargs: False)
    carried = _carried(view, tmp_path, _set(tmp_path, view, REFERENCE))
    assert set(ATTACK) <= carried  # asked by a named path, or the workdir's whole
