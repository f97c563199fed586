"""The transfer set: how it is derived, and how the review and the carry keep to it.

On task directories and overlay-shaped layers on disk (no engine). The end-to-end
proofs through real containers are in ``test_review_transfer_attacks.py``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review.carry import carry_work
from termgrade.scoring.review.integrity import review_layer
from termgrade.scoring.review.transfer import (
    TransferRoot,
    TransferSet,
    derive_transfer_set,
    named_paths,
)
from termgrade.task import load_task
from tests.support.overlay_layers import POLICY, put, whiteout
from tests.support.task_dirs import write_task


def test_named_paths_reads_prose_and_code() -> None:
    text = ("Write an executable `/app/logstats`. Keep notes in ~/notes.txt and the config "
            "in /etc/shop/shop.conf. See https://example.com/a/b and $HOME/x; "
            "open('/srv/data/in.csv').")
    assert named_paths(text) == ["/app/logstats", "/root/notes.txt", "/etc/shop/shop.conf",
                                 "/root/x", "/srv/data/in.csv"]  # $HOME/x is root's home


def _set(tmp_path: Path, instruction: str, tests: str, *, toml: str = "",
         reference: ReferenceRecord | None = None) -> TransferSet:
    root = write_task(tmp_path, tests=tests, toml=toml)
    (root / "instruction.md").write_text(instruction)
    return derive_transfer_set(load_task(root), workdir="/app", reference=reference)


def test_the_derived_set_names_each_root_and_why(tmp_path: Path) -> None:
    reference = ReferenceRecord(task_digest="d", footprint=["/opt/data", "/app/out.txt"])
    found = _set(tmp_path, "Install `/usr/local/bin/shop` and fix /etc/shop/shop.conf; "
                           "anything in /usr/bin or /usr/local/bin is fine.",
                 "def test_x():\n    open('/var/log/shop.log')\n    open('/logs/verifier/x')\n"
                 "    open('/tests/data.json')\n",
                 reference=reference)
    roots = {r.path: r.why for r in found.roots}
    assert roots["/app"] == "workdir"  # the reference wrote a file there: not the whole dir
    assert "/etc/shop" not in roots  # a named file is asked for alone, never its directory
    assert found.asked("/app/out.txt") and not found.asked("/app/bin/sha256sum")
    assert not found.asked("/etc/shop/other.conf") and "/etc/shop/other.conf" not in found
    assert found.carries_changes("/etc/shop/shop.conf")
    assert not found.carries_changes("/etc/shop/other.conf")
    assert found.carries_created("/etc/shop/other.conf")  # created: carried anywhere
    assert roots["/usr/local/bin/shop"] == roots["/etc/shop/shop.conf"] == "instruction"
    assert roots["/var/log/shop.log"] == "tests"
    assert not found.carries_changes("/var/log/shop.log")  # the tests' file stays the image's
    assert roots["/opt/data"] == "reference"
    assert roots["/etc/passwd"] == "accounts" and "/home" not in roots
    assert found.accounts("/etc/passwd")  # merged: new users only
    # too wide to ask for, or the grader's own
    assert not {"/usr/bin", "/usr/local/bin", "/logs/verifier/x", "/tests/data.json"} & set(roots)
    assert found.asked("/usr/local/bin/shop") and not found.asked("/var/log/shop.log")
    assert "/app/sub/x.py" in found and "/usr/local/bin/other" not in found
    assert found.above("/usr/local/bin") and not found.above("/usr/lib")
    # scratch: what the agent created there is carried only where a text names it
    assert not found.carries_created("/tmp/build/x.o")
    assert not found.carries_created("/root/.cache/pip/x")
    assert found.carries_created("/opt/elsewhere/x")
    assert found.hint("/usr/bin/shop") == "`shop` is named by the task's text"


def test_a_named_file_in_a_system_tree_asks_for_that_file_only(tmp_path: Path) -> None:
    """Naming one header, library or alternatives link asks for that file, never for the
    tree: the agent's other changes there stay out (they would change what the image's
    compiler, loader or tools compute)."""
    reference = ReferenceRecord(task_digest="d",
                                footprint=["/usr/lib/x86_64-linux-gnu/libshop.so.1"])
    found = _set(tmp_path, "Fix /usr/include/shop.h and /etc/alternatives/editor; "
                           "see /usr/include for the rest.", "", reference=reference)
    roots = {r.path for r in found.roots}
    assert {"/usr/include/shop.h", "/etc/alternatives/editor",
            "/usr/lib/x86_64-linux-gnu/libshop.so.1"} <= roots
    for system in ("/usr/include", "/etc/alternatives", "/usr/lib/x86_64-linux-gnu"):
        assert system not in roots
    assert not found.carries_changes("/usr/include/stdio.h")
    assert not found.carries_changes("/usr/lib/x86_64-linux-gnu/libz.so.1")


def test_declared_artifacts_in_separate_mode_are_the_whole_set(tmp_path: Path) -> None:
    toml = ('schema_version = "1.4"\nartifacts = ["/app/report.json"]\n'
            '[verifier]\ntimeout_sec = 60.0\nenvironment_mode = "separate"\n')
    found = _set(tmp_path, "Write /app/report.json and /srv/x.", "", toml=toml)
    assert found.declared and [r.path for r in found.roots] == ["/app/report.json"]


@pytest.fixture
def layers(tmp_path: Path) -> tuple[Path, Path, Path]:
    lower, upper, target = tmp_path / "lower", tmp_path / "upper", tmp_path / "target"
    for path in ("/usr/bin/bash", "/usr/bin/sha256sum", "/usr/bin/sleep", "/etc/passwd",
                 "/usr/lib/x86_64-linux-gnu/libz.so.1", "/etc/nsswitch.conf",
                 "/usr/lib/x86_64-linux-gnu/libnss_files.so.2"):
        put(lower, path)
    (lower / "etc/nsswitch.conf").write_text("passwd: files\nprotocols: db files\n")
    for directory in ("/app", "/srv", "/usr/local/bin", "/root", "/opt"):
        put(lower, directory, None)
    os.chmod(lower / "srv", 0o755)
    upper.mkdir()
    target.mkdir()
    return lower, upper, target


SET = TransferSet((TransferRoot("/app", "workdir"), TransferRoot("/srv/shop", "instruction"),
                   TransferRoot("/usr/local/bin/shop", "instruction"),
                   TransferRoot("/usr/local/bin/cmp", "tests"),
                   TransferRoot("/etc/nsswitch.conf", "instruction")))


def _review(lower: Path, upper: Path):  # type: ignore[no-untyped-def]
    return review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY, transfer=SET)


def test_created_work_is_carried_anywhere_changes_only_where_asked(
        layers: tuple[Path, Path, Path]) -> None:
    lower, upper, target = layers
    put(lower, "/tmp", None)
    put(upper, "/app/main.py")
    put(upper, "/srv", None, mode=0o777)  # a directory the set passes through
    put(upper, "/srv/shop/index.html")
    put(upper, "/srv/other/x")  # created where no text names it: carried
    put(upper, "/usr/local/bin/shop", "#!/bin/sh\n", mode=0o755)
    put(upper, "/usr/local/bin/sleep", "#!/bin/sh\n", mode=0o755)  # shadows: left out
    put(upper, "/usr/bin/sha256sum", "forged", mode=0o755)  # an image file changed
    put(upper, "/root/.bash_profile", "export SHOP=1")  # a start-up file: left out
    put(upper, "/tmp/build/shop.o")  # scratch: left out
    whiteout(upper, "/app/old.txt")
    result = _review(lower, upper)
    assert result.all_findings() == []
    assert sorted(e.path for e in result.carried) == [
        "/app/main.py", "/srv/other", "/srv/other/x", "/srv/shop",
        "/srv/shop/index.html", "/usr/local/bin/shop"]
    assert result.deleted == ["/app/old.txt"]
    # /srv's mode changed (0755 -> 0777): B has the image's /srv, and that is said
    assert set(result.left_out_paths) == {"/usr/local/bin/sleep", "/usr/bin/sha256sum",
                                          "/tmp/build", "/root/.bash_profile", "/srv"}
    summary = result.left_out_summary() or ""
    assert "/usr/local/bin/sleep (shadows the image's `sleep`" in summary
    writer = carry_work(str(target), (str(upper), [str(lower)]), result)
    writer.finish()
    assert (target / "srv/shop/index.html").is_file() and (target / "usr/local/bin/shop").is_file()
    assert (target / "srv/other/x").is_file()
    for absent in ("usr/local/bin/sleep", "usr/bin/sha256sum", "tmp/build", "root"):
        assert not (target / absent).exists(), absent
    assert stat.S_ISCHR(os.lstat(target / "app/old.txt").st_mode)
    # the directory the set passes through keeps the image's mode, not the agent's 0777
    assert stat.S_IMODE(os.lstat(target / "srv").st_mode) == 0o755
    # what stayed out is still in the agent's layer
    assert (upper / "usr/local/bin/sleep").is_file() and (upper / "tmp/build/shop.o").is_file()


def test_an_image_file_only_the_tests_name_stays_the_images(
        layers: tuple[Path, Path, Path]) -> None:
    """The tests' ground truth shipped in the image: the agent's edit is not carried; a
    file the agent created at a path the tests name is (even in scratch)."""
    lower, upper, _ = layers
    put(lower, "/srv/expected.json", "{}")
    put(upper, "/srv/expected.json", '{"forged": 1}')
    put(upper, "/tmp/answer.txt", "42")
    only_tests = TransferSet((*SET.roots, TransferRoot("/srv/expected.json", "tests"),
                              TransferRoot("/tmp/answer.txt", "tests")))
    result = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                          transfer=only_tests)
    carried = [e.path for e in result.carried]
    assert "/srv/expected.json" not in carried and "/tmp/answer.txt" in carried
    assert "/srv/expected.json" in result.left_out_paths
    # the control: named by the instruction, the same edit is carried
    asked = TransferSet((*SET.roots, TransferRoot("/srv/expected.json", "instruction")))
    again = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                         transfer=asked)
    assert "/srv/expected.json" in [e.path for e in again.carried]


@pytest.mark.parametrize(("path", "data", "why"), [
    ("/usr/local/bin/cmp", "#!/bin/sh\nexit 0\n", None),  # a new name: nothing shadowed
    ("/usr/local/bin/sha256sum", "#!/bin/sh\n", "shadows the image's `sha256sum`"),
    # not where the loader looks by name (an ld.so.conf.d entry naming /app/lib would
    # show in the grader's ldconfig comparison: a finding there)
    ("/app/lib/libz.so.1", "x", None),
    ("/usr/local/lib/libz.so.1", "x", "shared library"),
    ("/app/lib/libshop.so.1", "x", None),  # a name of its own
    ("/usr/lib/x86_64-linux-gnu/libz.so.1", "x", "shared library"),
    # an NSS module is loaded by name where the loader looks, never from /app
    ("/app/libnss_evil.so.2", "x", None),
    ("/usr/local/lib/libnss_evil.so.2", "x", "an NSS module the image lacks"),
    ("/etc/nsswitch.conf", "passwd: evil files\n", "names the NSS module `evil`"),
    ("/app/ssl/openssl.cnf", "[s]\nmodule = /app/evil.so\n", "loads /app/evil.so"),
    ("/app/lib/ossl-modules/legacy.so", "x", "OpenSSL module"),
])
@pytest.mark.parametrize("why_root", ["instruction", "tests"])
def test_a_stand_in_is_a_finding_where_asked_and_left_out_where_created(
        layers: tuple[Path, Path, Path], path: str, data: str, why: str | None,
        why_root: str) -> None:
    """Where the task asks for the path, a stand-in is a finding (0); where the agent
    merely created it, it is left out, the reason said. An image file changed where the
    task asked for nothing is left out either way."""
    lower, upper, _ = layers
    named = TransferSet((*SET.roots, TransferRoot(path, why_root)))
    put(upper, path, data, mode=0o755)
    result = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                          transfer=named)
    carried = [e.path for e in result.carried]
    existed = LowerView([str(lower)]).lstat(path) is not None
    if why is None:
        assert result.all_findings() == [] and path in carried
    elif why_root == "tests" and SET.carries_changes(path):  # in the working directory
        assert any(why in f and path in f for f in result.all_findings()), result.all_findings()
    elif why_root == "tests" and existed:
        assert result.all_findings() == [] and path not in carried
        assert path in result.left_out_paths
    elif why_root == "tests":
        assert result.all_findings() == [] and path not in carried
        assert why in (result.left_out_summary() or ""), result.left_out_summary()
    elif path.startswith("/usr/local/bin/"):  # asked for: may replace an image tool
        assert result.all_findings() == [] and path in carried
    else:
        assert any(why in f and path in f for f in result.all_findings()), result.all_findings()
        assert path not in carried


def test_nsswitch_naming_the_images_own_modules_is_carried(
        layers: tuple[Path, Path, Path]) -> None:
    lower, upper, _ = layers
    put(upper, "/etc/nsswitch.conf", "passwd: files\ngroup: files\nprotocols: db files\n")
    result = _review(lower, upper)
    assert result.all_findings() == []
    assert "/etc/nsswitch.conf" in [e.path for e in result.carried]


def test_an_asked_for_replacement_on_path_is_carried(layers: tuple[Path, Path, Path]) -> None:
    """The instruction asks for /usr/local/bin/shop; the image has no such tool, and a path
    the task asks for may replace what the image had there."""
    lower, upper, _ = layers
    put(lower, "/usr/bin/shop", "old")
    put(upper, "/usr/local/bin/shop", "#!/bin/sh\n", mode=0o755)
    result = _review(lower, upper)
    assert result.all_findings() == []


def test_the_footprint_is_the_top_most_changes(layers: tuple[Path, Path, Path]) -> None:
    lower, upper, _ = layers
    put(upper, "/srv/shop/a/b/c.txt")
    put(upper, "/srv/shop/d.txt")
    put(upper, "/opt/new/x")
    put(upper, "/app/main.py")
    result = _review(lower, upper)
    assert sorted(result.footprint) == ["/app/main.py", "/opt/new", "/srv/shop"]
