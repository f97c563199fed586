"""An image file the instruction names is asked for only where the task changes it: with a
recorded reference run, a named image file the reference left as it was (the input data,
a validator "not to be modified") is read, not asked for (``input``), and the image's file
stays the image's (round 7 of the cold attacks rewrote both and scored 1). A named file the
reference changed, one the agent creates, a named directory, and any named file without a
reference record stay asked for."""

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

INSTRUCTION = ("Sum the numbers in /srv/data/numbers.txt into /app/sum.txt, fix "
               "/etc/shop/app.conf so it listens on 8081, and check your work with "
               "/opt/validator/validate.py (do not modify the validator). Configuration "
               "snippets go in /etc/shop/conf.d.\n")
REFERENCE = ReferenceRecord(task_digest="d", footprint=["/app/sum.txt", "/etc/shop/app.conf"])


@pytest.fixture
def view(tmp_path: Path) -> Path:
    view = tmp_path / "image"
    put(view, "/srv/data/numbers.txt", "1\n2\n")
    put(view, "/etc/shop/app.conf", "listen 8080\n")
    put(view, "/etc/shop/conf.d/base.conf", "x\n")
    put(view, "/opt/validator/validate.py", "import sys\n")
    put(view, "/app", None)
    return view


def _set(tmp_path: Path, view: Path, reference: ReferenceRecord | None) -> TransferSet:
    root = write_task(tmp_path / "task", instruction=INSTRUCTION)
    return derive_transfer_set(load_task(root), workdir="/app", reference=reference,
                               view=str(view))


def _carried(view: Path, tmp_path: Path, transfer: TransferSet) -> list[str]:
    upper = tmp_path / "upper"
    put(upper, "/srv/data/numbers.txt", "0\n")
    put(upper, "/opt/validator/validate.py", "import sys; sys.exit(0)\n")
    put(upper, "/etc/shop/app.conf", "listen 8081\n")
    put(upper, "/etc/shop/conf.d/base.conf", "y\n")
    put(upper, "/srv/data/extra.txt", "mine\n")
    review = review_layer(walk_upper(str(upper)), LowerView([str(view)]), POLICY,
                          transfer=transfer)
    return [e.path for e in review.carried]


def test_named_inputs_the_reference_left_alone_stay_the_images(
        view: Path, tmp_path: Path) -> None:
    transfer = _set(tmp_path, view, REFERENCE)
    why = {r.path: r.why for r in transfer.roots}
    assert why["/srv/data/numbers.txt"] == why["/opt/validator/validate.py"] == "input"
    assert why["/etc/shop/app.conf"] == "instruction"  # the reference changed it
    # a named directory the reference left as it was is an input too: the image's files
    # in it stay the image's (tests/scoring/test_review_named_inputs_more.py)
    assert why["/etc/shop/conf.d"] == "input"
    carried = _carried(view, tmp_path, transfer)
    assert "/srv/data/numbers.txt" not in carried
    assert "/opt/validator/validate.py" not in carried
    assert "/etc/shop/conf.d/base.conf" not in carried
    assert {"/etc/shop/app.conf", "/srv/data/extra.txt"} <= set(carried)  # created: anywhere


def test_without_a_reference_record_a_named_file_stays_asked_for(
        view: Path, tmp_path: Path) -> None:
    transfer = _set(tmp_path, view, None)
    assert {r.path: r.why for r in transfer.roots}["/srv/data/numbers.txt"] == "instruction"
    assert "/srv/data/numbers.txt" in _carried(view, tmp_path, transfer)


def test_the_rule_patched_out_carries_the_rewritten_input(
        view: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transfer_mod, "_instruction_why", lambda *args: "instruction")
    carried = _carried(view, tmp_path, _set(tmp_path, view, REFERENCE))
    assert {"/srv/data/numbers.txt", "/opt/validator/validate.py"} <= set(carried)
