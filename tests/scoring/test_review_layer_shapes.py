"""The review against the shapes overlay layers take (no engine but for the last tests):
the image's own layers merged as the kernel merges them (a whiteout or an opaque
directory of a later Dockerfile step deletes what an earlier one made), a changed
directory the transfer set only passes through (its mode is a change, said and in the
footprint), and what a carried entry needs above it (never a directory the review left
out: a file turned into a directory, a directory deleted and made anew).

The eighth cold round's findings: H1 (an honest command at a path an earlier image layer
deleted was taken for a change of an image file: left out, an honest 0), H2 (``chmod 755
/srv/data`` silently reset in B: the reference itself unsatisfiable) and a smuggle (an
image file replaced by a directory with a child: the child carried, the directory made
in B over the image's file). Each case has its honest twin and the fix patched out.
"""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.errors import CarryError
from termgrade.scoring.review import integrity
from termgrade.scoring.review.carry import LayerWriter, carry_work
from termgrade.scoring.review.integrity import LayerReview, review_layer
from termgrade.scoring.review.transfer import TransferRoot, TransferSet
from tests.support.overlay_layers import POLICY, put, whiteout

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="whiteouts and trusted.* need root")

OPAQUE = "trusted.overlay.opaque"
SET = TransferSet((TransferRoot("/app", "workdir"),
                   TransferRoot("/srv/data/numbers.txt", "instruction"),
                   TransferRoot("/app/answer.txt", "instruction"),
                   TransferRoot("/opt/truth/expected.txt", "tests")))


def _old_lstat(self: LowerView, path: str) -> os.stat_result | None:
    """``LowerView.lstat`` before the fix: the first layer's entry, whiteouts included."""
    relative = path.lstrip("/")
    for lower in self.lower_dirs:
        try:
            return os.lstat(os.path.join(lower, relative))
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return None


def _opaque(root: Path, path: str) -> Path:
    target = put(root, path, None)
    os.setxattr(target, OPAQUE, b"y")
    return target


def _review(layers: list[Path], upper: Path, transfer: TransferSet = SET) -> LayerReview:
    return review_layer(walk_upper(str(upper)), LowerView([str(p) for p in layers]), POLICY,
                        transfer=transfer)


def _carried(review: LayerReview) -> list[str]:
    return [e.path for e in review.carried]


def _carry(layers: list[Path], upper: Path, target: Path, review: LayerReview) -> None:
    target.mkdir(exist_ok=True)
    carry_work(str(target), (str(upper), [str(p) for p in layers]), review).finish()


@pytest.fixture
def image(tmp_path: Path) -> tuple[Path, Path]:
    """Two image layers, top first: ``top`` (a later Dockerfile step) over ``base``."""
    top, base = tmp_path / "top", tmp_path / "base"
    for directory in ("/app", "/usr/local/bin", "/opt/truth", "/tmp"):
        put(base, directory, None)
    put(base, "/srv/data", None, mode=0o700)
    put(base, "/srv/data/numbers.txt", "1\n2\n3\n")
    put(base, "/opt/truth/expected.txt", "42\n")
    top.mkdir()
    return top, base


# --- H1: the image's own whiteouts and opaque directories -----------------------------------


def test_the_view_merges_the_layers_as_the_kernel_does(tmp_path: Path) -> None:
    top, base = tmp_path / "top", tmp_path / "base"
    put(base, "/usr/local/bin/greet", "legacy")
    whiteout(top, "/usr/local/bin/greet")              # RUN rm /usr/local/bin/greet
    put(base, "/srv/old/x")
    whiteout(top, "/srv/old")                          # RUN rm -r /srv/old
    put(base, "/srv/tool/run.sh")
    put(base, "/srv/tool/lib/a.py")
    _opaque(top, "/srv/tool")                          # RUN rm -r /srv/tool && mkdir /srv/tool
    put(top, "/srv/tool/new.sh")
    put(base, "/srv/file/inner")
    put(top, "/srv/file", "now a file")                # a directory replaced by a file
    put(base, "/srv/kept/a")
    put(top, "/srv/kept/b")
    whiteout(top, "/srv/kept/gone")
    put(base, "/srv/kept/gone")
    lower = LowerView([str(top), str(base)])
    for absent in ("/usr/local/bin/greet", "/srv/old", "/srv/old/x", "/srv/tool/run.sh",
                   "/srv/tool/lib", "/srv/tool/lib/a.py", "/srv/file/inner",
                   "/srv/kept/gone", "/srv/nothing", "/srv/nothing/deeper"):
        assert lower.lstat(absent) is None, absent
        assert lower.host_path(absent) is None, absent
    assert lower.host_path("/srv/tool/new.sh") == f"{top}/srv/tool/new.sh"
    assert lower.host_path("/srv/kept/a") == f"{base}/srv/kept/a"
    info = lower.lstat("/srv/file")
    assert info is not None and stat.S_ISREG(info.st_mode)
    assert lower.listdir("/srv/kept") == {"a", "b"}
    assert lower.listdir("/srv/tool") == {"new.sh"}
    assert lower.listdir("/srv/old") == set() == lower.listdir("/srv/file")
    assert lower.listdir("/usr/local/bin") == set()
    # the view before the fix: a whiteout was an image file, an opaque directory transparent
    assert _old_lstat(lower, "/usr/local/bin/greet") is not None
    assert _old_lstat(lower, "/srv/tool/run.sh") is not None


def test_a_command_made_where_an_earlier_layer_deleted_one_is_created_work(
        image: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top, base = image
    put(base, "/usr/local/bin/greet", "#!/bin/sh\necho legacy\n", 0o755)
    whiteout(top, "/usr/local/bin/greet")
    put(base, "/srv/tool/run.sh", "old")
    _opaque(top, "/srv/tool")
    upper = tmp_path / "upper"
    put(upper, "/usr/local/bin/greet", "#!/bin/sh\necho hello, world\n", 0o755)
    put(upper, "/srv/tool/run.sh", "mine")
    review = _review([top, base], upper)
    assert {"/usr/local/bin/greet", "/srv/tool/run.sh"} <= set(_carried(review))
    assert review.left_out == 0, review.left_out_summary()
    # the fix patched out: the whiteout is "the image's file", the new command a change
    monkeypatch.setattr(LowerView, "lstat", _old_lstat)
    old = _review([top, base], upper)
    assert not {"/usr/local/bin/greet", "/srv/tool/run.sh"} & set(_carried(old))
    assert "/usr/local/bin/greet" in old.left_out_paths


def test_the_honest_twin_an_image_file_still_is_one(
        image: tuple[Path, Path], tmp_path: Path) -> None:
    """Without the deletion the image has the command: the agent's edit is a change of an
    image file nothing asks for (left out, said), as before."""
    top, base = image
    put(base, "/usr/local/bin/greet", "#!/bin/sh\necho legacy\n", 0o755)
    put(top, "/usr/local/bin/greet", "#!/bin/sh\necho newer\n", 0o755)  # a later layer's
    upper = tmp_path / "upper"
    put(upper, "/usr/local/bin/greet", "#!/bin/sh\necho hello, world\n", 0o755)
    review = _review([top, base], upper)
    assert "/usr/local/bin/greet" not in _carried(review)
    assert "/usr/local/bin/greet" in review.left_out_paths


# --- H2: a directory's mode, owner or group is a change ---------------------------------------


def _chmod_data(upper: Path, mode: int = 0o755) -> None:
    put(upper, "/srv/data", None, mode=mode)
    put(upper, "/app/result.txt", "17\n")


def test_a_directory_chmod_on_the_way_to_a_named_path_is_carried(
        image: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mode or owner of a directory on the way to a path the task asks for is part of
    that path's access ("fix the permissions of /srv/data/numbers.txt" where /srv/data
    denied them): carried, without a reference too (fairness round 9, N5), and in the
    footprint alone (never what the image has in it)."""
    top, base = image
    upper = tmp_path / "upper"
    _chmod_data(upper)
    put(upper, "/srv/data/numbers.txt", "5\n")  # asked: carried into the directory
    review = _review([top, base], upper)
    assert "/srv/data" in _carried(review) and review.left_out == 0
    assert "/srv/data" in review.footprint
    _carry([top, base], upper, tmp_path / "b", review)
    assert stat.S_IMODE(os.lstat(tmp_path / "b/srv/data").st_mode) == 0o755
    # the rule patched out: the image's mode in B, said and in the footprint (round 8)
    monkeypatch.setattr(TransferSet, "asked_below", lambda self, path: False)
    upper = tmp_path / "upper2"  # the carry moved the first layer's files
    _chmod_data(upper)
    put(upper, "/srv/data/numbers.txt", "5\n")
    old = _review([top, base], upper)
    assert "/srv/data" in old.left_out_paths and "mode or owner" in \
        old.left_out_notes["/srv/data"]
    assert ("ancestor", "/srv/data") in [(v, e.path) for v, e in old.replay]


def test_a_directory_chmod_on_the_way_to_a_path_only_the_tests_name_is_said(
        image: tuple[Path, Path], tmp_path: Path) -> None:
    top, base = image
    upper = tmp_path / "upper"
    put(upper, "/opt/truth", None, mode=0o777)
    review = _review([top, base], upper)
    assert "/opt/truth" in review.left_out_paths and "/opt/truth" not in _carried(review)
    assert "mode or owner" in review.left_out_notes["/opt/truth"]


def test_with_the_reference_footprint_naming_it_the_directory_is_carried(
        image: tuple[Path, Path], tmp_path: Path) -> None:
    top, base = image
    upper = tmp_path / "upper"
    _chmod_data(upper)
    asked = TransferSet((*SET.roots, TransferRoot("/srv/data", "reference")))
    review = _review([top, base], upper, asked)
    assert "/srv/data" in _carried(review) and review.left_out == 0
    _carry([top, base], upper, tmp_path / "b", review)
    assert stat.S_IMODE(os.lstat(tmp_path / "b/srv/data").st_mode) == 0o755


@pytest.mark.parametrize("change", ["none", "times", "owner", "opaque"])
def test_times_alone_are_no_change_owner_and_a_new_directory_are(
        image: tuple[Path, Path], tmp_path: Path, change: str) -> None:
    top, base = image
    upper = tmp_path / "upper"
    _chmod_data(upper, 0o700)  # copied up as the image has it (the named file was edited)
    put(upper, "/srv/data/numbers.txt", "5\n")
    data = upper / "srv/data"
    if change == "times":
        os.utime(data, (1, 1))
    elif change == "owner":
        os.chown(data, 1001, 1001)
    elif change == "opaque":
        os.setxattr(data, OPAQUE, b"y")
    review = _review([top, base], upper)
    assert "/srv/data/numbers.txt" in _carried(review)
    if change in ("none", "times"):
        assert review.left_out == 0, review.left_out_summary()
        assert "/srv/data" not in review.footprint
    elif change == "owner":  # on the way to the named file: part of its access, carried
        assert review.left_out == 0 and "/srv/data" in _carried(review)
        assert "/srv/data" in review.footprint
    else:  # deleted and made anew: never carried for what it held
        assert review.left_out_paths == ["/srv/data"], review.left_out_summary()
        assert "/srv/data" in review.footprint


# --- a carried entry never needs an ancestor the review left out ------------------------------


def _file_to_dir(upper: Path) -> None:
    put(upper, "/opt/truth", None)
    _opaque(upper, "/opt/truth/expected.txt")  # rm expected.txt; mkdir expected.txt
    put(upper, "/opt/truth/expected.txt/child", "x")
    put(upper, "/app/answer.txt", "1\n")


def test_an_image_file_turned_into_a_directory_carries_nothing_below_it(
        image: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top, base = image
    upper = tmp_path / "upper"
    _file_to_dir(upper)
    review = _review([top, base], upper)
    assert _carried(review) == ["/app/answer.txt"]
    assert review.left_out_paths == ["/opt/truth/expected.txt"] and review.left_out == 2
    _carry([top, base], upper, tmp_path / "b", review)
    assert not (tmp_path / "b/opt/truth/expected.txt").exists()  # B shows the image's file
    # the fix patched out: the child is "created", carried, its parent made over the file
    monkeypatch.setattr(integrity, "_inside_left_out", lambda *args: False)
    old = _review([top, base], upper)
    assert "/opt/truth/expected.txt/child" in _carried(old)
    # ... which the carry refuses (it makes no parent over an image file): scoring fails
    with pytest.raises(CarryError, match="no directory"):
        _carry([top, base], upper, tmp_path / "b-old", old)


def test_the_honest_twin_a_new_file_beside_the_image_file_is_carried(
        image: tuple[Path, Path], tmp_path: Path) -> None:
    top, base = image
    upper = tmp_path / "upper"
    put(upper, "/opt/truth/notes.txt", "mine")
    review = _review([top, base], upper)
    assert "/opt/truth/notes.txt" in _carried(review) and review.left_out == 0


def test_a_directory_the_image_has_deleted_and_made_anew_carries_nothing_below_it(
        image: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``rm -r /opt/cfg; mkdir /opt/cfg`` where nothing asks for /opt/cfg: left out with
    all of it (a new file there is no more carried than the deletion)."""
    top, base = image
    put(base, "/opt/cfg/a.conf", "a")
    upper = tmp_path / "upper"
    _opaque(upper, "/opt/cfg")
    put(upper, "/opt/cfg/new.conf", "n")
    review = _review([top, base], upper)
    assert _carried(review) == [] and review.left_out_paths == ["/opt/cfg"]
    _carry([top, base], upper, tmp_path / "b", review)
    assert not (tmp_path / "b/opt/cfg").exists()
    monkeypatch.setattr(integrity, "_inside_left_out", lambda *args: False)
    assert "/opt/cfg/new.conf" in _carried(_review([top, base], upper))


def test_the_honest_twins_inside_the_set_and_a_created_directory(
        image: tuple[Path, Path], tmp_path: Path) -> None:
    """Deleted and made anew where the task asks (the workdir): carried, opaque in B; a
    directory the agent created outside the set (scratch) keeps its named child carried;
    a directory merely chmodded outside the set keeps its new child carried."""
    top, base = image
    put(base, "/app/build/old.o")
    put(base, "/opt/tools", None)
    upper = tmp_path / "upper"
    _opaque(upper, "/app/build")
    put(upper, "/app/build/new.o")
    put(upper, "/opt/tools", None, mode=0o700)
    put(upper, "/opt/tools/mine.sh", "x")
    review = _review([top, base], upper)
    assert {"/app/build", "/app/build/new.o", "/opt/tools/mine.sh"} <= set(_carried(review))
    assert review.left_out_paths == ["/opt/tools"]
    _carry([top, base], upper, tmp_path / "b", review)
    assert os.getxattr(tmp_path / "b/app/build", OPAQUE) == b"y"
    assert (tmp_path / "b/opt/tools/mine.sh").is_file()


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_an_image_directory_replaced_by_a_file_or_link_stays_the_images(
        image: tuple[Path, Path], tmp_path: Path, kind: str) -> None:
    top, base = image
    upper = tmp_path / "upper"
    put(upper, "/srv", None)
    if kind == "file":
        put(upper, "/srv/data", "not a directory")
    else:
        os.symlink("/tmp/elsewhere", upper / "srv/data")
    review = _review([top, base], upper)
    assert _carried(review) == [] and review.left_out_paths == ["/srv/data"]
    _carry([top, base], upper, tmp_path / "b", review)
    assert not os.path.lexists(tmp_path / "b/srv/data")
    # inside the set the replacement is the agent's work: carried
    put(base, "/app/data/in.txt")
    upper2 = tmp_path / "upper2"
    put(upper2, "/app/data", "now a file")
    assert _carried(_review([top, base], upper2)) == ["/app/data"]


def test_a_file_of_the_image_above_a_root_is_no_directory_to_pass_through(
        image: tuple[Path, Path], tmp_path: Path) -> None:
    """The set passes through /srv/data toward the named file; where the image has a file
    at /srv/data, the agent's directory there is a change of type: left out with what it
    holds, and B keeps the image's file."""
    top, base = image
    put(top, "/srv/data", "a file in a later layer")  # replaces the base layer's directory
    upper = tmp_path / "upper"
    _opaque(upper, "/srv/data")
    put(upper, "/srv/data/numbers.txt", "5\n")
    review = _review([top, base], upper)
    assert _carried(review) == [] and review.left_out_paths == ["/srv/data"]
    assert [e.path for _, e in review.replay] == ["/srv"]  # not /srv/data


def test_the_carry_never_makes_a_parent_over_an_image_file(
        image: tuple[Path, Path], tmp_path: Path) -> None:
    top, base = image
    target = tmp_path / "b"
    target.mkdir()
    writer = LayerWriter(str(target), None, LowerView([str(top), str(base)]))
    with pytest.raises(CarryError, match="no directory"):
        writer.parent_of("/opt/truth/expected.txt/child")
    assert writer.parent_of("/opt/truth/new.txt") == f"{target}/opt/truth/new.txt"


# --- end to end (docker) ----------------------------------------------------------------------

GREET_TESTS = textwrap.dedent("""\
    import subprocess


    def test_greet():
        out = subprocess.run(["greet"], capture_output=True, text=True)
        assert out.stdout.strip() == "hello, world"
    """)
GREET_IMAGE = ("FROM termgrade/base:local\nWORKDIR /app\n"
               "RUN printf '#!/bin/sh\\necho legacy\\n' > /usr/local/bin/greet "
               "&& chmod +x /usr/local/bin/greet\nRUN rm /usr/local/bin/greet\n")
GREET = ("printf '#!/bin/sh\\necho \"hello, world\"\\n' > /usr/local/bin/greet\n"
         "chmod +x /usr/local/bin/greet\n")
DATA_TESTS = textwrap.dedent("""\
    import os


    def test_report_can_read():
        assert os.stat("/srv/data").st_mode & 0o005 == 0o005
    """)
DATA_IMAGE = ("FROM termgrade/base:local\nWORKDIR /app\n"
              "RUN mkdir -p /srv/data && echo 7 > /srv/data/numbers.txt && chmod 700 /srv/data\n")


def _docker_task(parent: Path, name: str, tests: str, dockerfile: str, instruction: str,
                 solve: str) -> Path:
    from termgrade.sandbox.images import build_task_image
    from termgrade.task import load_task
    from tests.support.task_dirs import task_toml, write_task

    root = write_task(parent, name, tests=tests, dockerfile=dockerfile, solve=solve,
                      toml=task_toml(verifier_s=60.0, agent_s=30.0), instruction=instruction)
    build_task_image(load_task(root))
    return root


@pytest.mark.docker
def test_end_to_end_a_command_where_the_image_deleted_one_scores_1(tmp_path: Path) -> None:
    from termgrade.scoring.reference import ReferenceRecord
    from tests.support.grading import play_script

    root = _docker_task(tmp_path, "greet-whiteout", GREET_TESTS, GREET_IMAGE,
                        "Install a command named `greet` on the PATH that prints "
                        "`hello, world`.\n", GREET)
    outcome = play_script(root, GREET, tmp_path, reference=ReferenceRecord(task_digest="none"))
    assert outcome.reward == 1.0, (outcome.failure, outcome.left_out)


@pytest.mark.docker
def test_end_to_end_a_directory_chmod_on_the_way_to_a_named_file_is_carried(
        tmp_path: Path) -> None:
    from termgrade.scoring.reference import ReferenceRecord
    from tests.support.grading import play_script

    root = _docker_task(tmp_path, "data-chmod", DATA_TESTS, DATA_IMAGE,
                        "The `report` user cannot read `/srv/data/numbers.txt`. Fix the "
                        "permissions so it can.\n", "chmod 755 /srv/data\n")
    chmod = "chmod 755 /srv/data\n"
    alone = play_script(root, chmod, tmp_path, reference=ReferenceRecord(task_digest="none"))
    assert alone.reward == 1.0, (alone.failure, alone.left_out)  # on the way to a named file
    assert "/srv/data" in alone.footprint
    asked = ReferenceRecord(task_digest="none", footprint=["/srv/data"])
    outcome = play_script(root, chmod, tmp_path, reference=asked)
    assert outcome.reward == 1.0, (outcome.failure, outcome.left_out)


def test_the_reviews_readers_of_image_bytes_see_the_merged_image(tmp_path: Path) -> None:
    """Every place the review reads an image file's bytes or link goes through the merged
    view: a link or an account database a later layer deleted is not the image's."""
    from termgrade.scoring.review import accounts, links_in_b, standins
    from termgrade.scoring.verifier import during

    top, base = tmp_path / "top", tmp_path / "base"
    os.makedirs(base / "usr/bin")
    os.symlink("/usr/bin/python3.11", base / "usr/bin/python3")
    whiteout(top, "/usr/bin/python3")                   # RUN rm /usr/bin/python3
    put(base, "/etc/group", "root:x:0:\n")
    whiteout(top, "/etc/group")
    put(base, "/opt/tool/run", "#!/bin/sh\n")
    put(top, "/opt/tool/run", "#!/usr/bin/perl\n")      # a later layer replaced it
    lower = LowerView([str(top), str(base)])
    assert links_in_b._lower_link(lower, "/usr/bin/python3") is None
    assert accounts._image_text(lower, "/etc/group") == ""
    assert standins._image_text(lower, "/opt/tool/run") == "#!/usr/bin/perl\n"
    assert during._image_path(lower, "/usr/bin/python3") is None
    assert during._image_path(lower, "/opt/tool/run") == f"{top}/opt/tool/run"
