"""Named inputs however the task spells them (round 9 of the cold attacks): the instruction
names the input ``data/numbers.txt`` relative to the working directory and the tests
build it from parts (``APP / "data" / "numbers.txt"``); with only literal absolute paths
read as names, the input was "the working directory's" and an agent that rewrote it to a
trivial case (and answered for that) scored an attested 1 with a recorded reference.

Now a relative name (read in the working directory, kept where the image has it) and a
path a Python test builds from constants are names like absolute ones. Honest twins: an
image file in the working directory no text names stays carried; without a reference
nothing changes; a code file the tests run by a relative name (``python3 main.py``: it
may be the deliverable) is not made an input. Control: with the spellings not read, the
attack is carried."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review import transfer as transfer_mod
from termgrade.scoring.review.integrity import review_layer
from termgrade.scoring.review.spellings import built_paths, relative_names
from termgrade.scoring.review.transfer import TransferSet, derive_transfer_set
from termgrade.task import load_task
from tests.support.overlay_layers import POLICY, put
from tests.support.task_dirs import write_task

INSTRUCTION = ("Your working directory holds the input `data/numbers.txt`: one integer per "
               "line. Write the sum of its primes to `result.txt` in the working directory.\n")
TESTS = ("import os\nimport subprocess\nfrom pathlib import Path\n\nAPP = Path('/app')\n"
         "TRUTH = os.path.join('/opt', 'truth')\n\n\n"
         "def test_result():\n"
         "    nums = (APP / 'data' / 'numbers.txt').read_text().split()\n"
         "    want = Path(f'{TRUTH}/sum.txt').read_text()\n"
         "    subprocess.run(['python3', 'main.py'], cwd='/app', check=True)\n"
         "    assert (APP / 'result.txt').read_text() == want and nums\n")
REFERENCE = ReferenceRecord(task_digest="d", footprint=["/app/result.txt"])
ATTACK = ("/app/data/numbers.txt", "/opt/truth/sum.txt")


def test_relative_names_are_words_with_a_slash_or_an_extension() -> None:
    text = ("Read `data/numbers.txt` and ./conf/app.ini, write result.txt (see "
            "https://example.org/a.html, /abs/x.txt, e.g. v3.11 or --out=o.txt); the src/ "
            "folder; not ../up.txt")
    assert relative_names(text) == ["data/numbers.txt", "conf/app.ini", "result.txt", "e.g",
                                    "o.txt", "src"]


def test_built_paths_fold_constants_and_nothing_else() -> None:
    source = ("import os, posixpath\nfrom pathlib import Path\nROOT = '/srv'\n"
              "D = os.path.join(ROOT, 'data')\nE = posixpath.join(D, 'e.csv')\n"
              "x = f'{D}/a.csv'\ny = Path(D).joinpath('b.csv')\nz = Path(unknown) / 'c'\n"
              "w = Path(ROOT) / name\n")
    assert built_paths(source) == ["/srv/data", "/srv/data/e.csv", "/srv/data/a.csv",
                                   "/srv/data/b.csv", "/srv"]
    assert built_paths("def broken(:\n") == []


@pytest.fixture
def view(tmp_path: Path) -> Path:
    view = tmp_path / "image"
    put(view, "/app/data/numbers.txt", "1\n2\n3\n")
    put(view, "/app/main.py", "print(1)\n")
    put(view, "/app/lib.py", "X = 1\n")
    put(view, "/opt/truth/sum.txt", "5\n")
    return view


def _set(tmp_path: Path, view: Path, reference: ReferenceRecord | None) -> TransferSet:
    root = write_task(tmp_path / "task", instruction=INSTRUCTION, tests=TESTS)
    return derive_transfer_set(load_task(root), workdir="/app", reference=reference,
                               view=str(view))


def _carried(view: Path, tmp_path: Path, transfer: TransferSet) -> set[str]:
    upper = tmp_path / "upper"
    for path in ATTACK:
        put(upper, path, "2\n")
    put(upper, "/app/main.py", "print(2)\n")  # the program the tests run: maybe the fix
    put(upper, "/app/lib.py", "X = 2\n")      # an image file no text names
    put(upper, "/app/result.txt", "2\n")
    review = review_layer(walk_upper(str(upper)), LowerView([str(view)]), POLICY,
                          transfer=transfer)
    return {e.path for e in review.carried}


HONEST = {"/app/main.py", "/app/lib.py", "/app/result.txt"}


def test_an_input_named_relatively_or_built_from_parts_stays_the_images(
        view: Path, tmp_path: Path) -> None:
    transfer = _set(tmp_path, view, REFERENCE)
    why = {r.path: r.why for r in transfer.roots}
    assert why["/app/data/numbers.txt"] == why["/opt/truth/sum.txt"] == "input"
    assert "/app/main.py" not in why  # code run by a relative name: not made an input
    carried = _carried(view, tmp_path, transfer)
    assert not carried & set(ATTACK)
    assert carried >= HONEST


def test_without_a_reference_record_nothing_changes(view: Path, tmp_path: Path) -> None:
    transfer = _set(tmp_path, view, None)
    assert "input" not in {r.why for r in transfer.roots}
    assert _carried(view, tmp_path, transfer) >= HONEST | {"/app/data/numbers.txt"}


def test_control_spellings_not_read_the_attack_is_carried(
        view: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transfer_mod, "relative_names", lambda _text: [])
    monkeypatch.setattr(transfer_mod, "built_paths", lambda _text: [])
    transfer = _set(tmp_path, view, REFERENCE)
    assert "/app/data/numbers.txt" in _carried(view, tmp_path, transfer)


@pytest.mark.parametrize("words", ["Run `git config --system core.hooksPath /opt/hooks`",
                                   "set core.hooksPath for every repository",
                                   "configure it in git's global gitconfig"])
def test_git_configuration_asked_by_command_or_key_asks_for_every_scope(
        tmp_path: Path, words: str) -> None:
    """Fairness round 9 (N6): naming ``git config`` (or its key, or its file) asks for the
    configuration, written at any scope; the honest ``--global`` or XDG file is carried
    beside the reference's ``--system``. Not named: each is a stand-in, left out."""
    view = tmp_path / "image"
    put(view, "/etc/hostname", "x\n")
    asked = write_task(tmp_path / "asked", instruction=f"{words}; the hook logs commits.\n")
    quiet = write_task(tmp_path / "quiet", instruction="Log every commit of /app/repo.\n")
    for root, expected in ((asked, set(transfer_mod.GIT_CONFIG_FILES)), (quiet, set())):
        transfer = derive_transfer_set(load_task(root), workdir="/app", view=str(view))
        upper = tmp_path / f"upper-{root.name}"
        for path in transfer_mod.GIT_CONFIG_FILES:
            put(upper, path, "[core]\n\thooksPath = /opt/hooks\n")
        review = review_layer(walk_upper(str(upper)), LowerView([str(view)]), POLICY,
                              transfer=transfer)
        assert {e.path for e in review.carried} & set(transfer_mod.GIT_CONFIG_FILES) \
            == expected, review.left_out_summary()


def test_code_named_relatively_is_no_input_code_built_from_constants_is(
        tmp_path: Path) -> None:
    """Fairness round 10 (Z1): the instruction names ``src/main.py`` relatively, the
    reference fixed a helper module, an honest solution fixes ``main.py`` itself: carried
    (a relative name makes an input of data only). Round 11: a checker the tests build as
    ``TOOLS / "validate.py"`` is read as a literal absolute path, code or not."""
    view = tmp_path / "image"
    put(view, "/app/src/main.py", "print(1)\n")
    put(view, "/app/src/util.py", "X = 1\n")
    put(view, "/app/data/in.csv", "1\n")
    put(view, "/app/tools/check.py", "import sys\n")
    root = write_task(tmp_path / "task", instruction="Fix `src/main.py` so it sums "
                      "`data/in.csv`.\n",
                      tests="from pathlib import Path\nAPP = Path('/app')\n"
                            "def test_x():\n    assert (APP / 'tools' / 'check.py').exists()\n")
    reference = ReferenceRecord(task_digest="d", footprint=["/app/src/util.py"])
    transfer = derive_transfer_set(load_task(root), workdir="/app", reference=reference,
                                   view=str(view))
    why = {r.path: r.why for r in transfer.roots}
    assert why["/app/data/in.csv"] == why["/app/tools/check.py"] == "input"
    assert "/app/src/main.py" not in why and transfer.carries_changes("/app/src/main.py")
    assert not transfer.carries_changes("/app/tools/check.py")
