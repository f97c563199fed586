"""The transfer set: how it is derived, and how the review and the carry keep to it.

On task directories and overlay-shaped layers on disk (no engine). The end-to-end
proofs through real containers are in ``test_grading_transfer_attacks.py``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.carry import carry_work
from termgrade.scoring.integrity import review_layer
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.transfer import TransferRoot, TransferSet, derive_transfer_set, named_paths
from termgrade.task import load_task
from tests.support.overlay_layers import POLICY, put, whiteout
from tests.support.task_dirs import write_task


def test_named_paths_reads_prose_and_code() -> None:
    text = ("Write an executable `/app/logstats`. Keep notes in ~/notes.txt and the config "
            "in /etc/shop/shop.conf. See https://example.com/a/b and $HOME/x; "
            "open('/srv/data/in.csv').")
    assert named_paths(text) == ["/app/logstats", "/root/notes.txt", "/etc/shop/shop.conf",
                                 "/srv/data/in.csv"]


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
    assert roots["/etc/shop"] == "beside"  # the directory of a file the task asks for
    assert found.asked("/app/out.txt") and not found.asked("/app/bin/sha256sum")
    assert not found.asked("/etc/shop/other.conf") and "/etc/shop/other.conf" in found
    assert roots["/usr/local/bin/shop"] == roots["/etc/shop/shop.conf"] == "instruction"
    assert roots["/var/log/shop.log"] == "tests"
    assert roots["/opt/data"] == "reference"
    assert roots["/etc/passwd"] == roots["/home"] == "accounts"
    # too wide to ask for, or the grader's own
    assert not {"/usr/bin", "/usr/local/bin", "/logs/verifier/x", "/tests/data.json"} & set(roots)
    assert found.asked("/usr/local/bin/shop") and not found.asked("/var/log/shop.log")
    assert "/app/sub/x.py" in found and "/usr/local/bin/other" not in found
    assert found.above("/usr/local/bin") and not found.above("/usr/lib")


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


def test_only_the_set_is_carried_and_the_rest_is_counted(layers: tuple[Path, Path, Path]) -> None:
    lower, upper, target = layers
    put(upper, "/app/main.py")
    put(upper, "/srv", None, mode=0o777)  # a directory the set passes through, mode changed
    put(upper, "/srv/shop/index.html")
    put(upper, "/srv/evil/x")
    put(upper, "/usr/local/bin/shop", "#!/bin/sh\n", mode=0o755)
    put(upper, "/usr/local/bin/sleep", "#!/bin/sh\n", mode=0o755)
    put(upper, "/usr/bin/sha256sum", "forged", mode=0o755)
    put(upper, "/root/.bash_profile", "sha256sum() { :; }")
    whiteout(upper, "/app/old.txt")
    result = _review(lower, upper)
    assert result.all_findings() == []
    assert sorted(e.path for e in result.carried) == [
        "/app/main.py", "/srv/shop", "/srv/shop/index.html", "/usr/local/bin/shop"]
    assert result.deleted == ["/app/old.txt"]
    assert result.left_out == 5
    assert result.left_out_paths == sorted(result.left_out_paths, key=result.left_out_paths.index)
    assert set(result.left_out_paths) == {"/srv/evil", "/usr/local/bin/sleep",
                                          "/usr/bin/sha256sum", "/root/.bash_profile"}
    assert "/usr/local/bin/sleep" in (result.left_out_summary() or "")
    writer = carry_work(str(target), (str(upper), [str(lower)]), result)
    writer.finish()
    assert (target / "srv/shop/index.html").is_file() and (target / "usr/local/bin/shop").is_file()
    for absent in ("srv/evil", "usr/local/bin/sleep", "usr/bin/sha256sum", "root"):
        assert not (target / absent).exists(), absent
    assert stat.S_ISCHR(os.lstat(target / "app/old.txt").st_mode)
    # the directory the set passes through keeps the image's mode, not the agent's 0777
    assert stat.S_IMODE(os.lstat(target / "srv").st_mode) == 0o755
    # what stayed out is still in the agent's layer
    assert (upper / "usr/local/bin/sleep").is_file() and (upper / "srv/evil/x").is_file()


@pytest.mark.parametrize(("path", "data", "why"), [
    ("/usr/local/bin/cmp", "#!/bin/sh\nexit 0\n", None),  # a new name: nothing shadowed
    ("/usr/local/bin/sha256sum", "#!/bin/sh\n", "shadows the image's `sha256sum`"),
    ("/app/lib/libz.so.1", "x", "shared library"),  # a loader.d entry could name /app/lib
    ("/app/lib/libshop.so.1", "x", None),  # a name of its own
    ("/usr/lib/x86_64-linux-gnu/libz.so.1", "x", "shared library"),
    ("/app/libnss_evil.so.2", "x", "an NSS module the image lacks"),
    ("/etc/nsswitch.conf", "passwd: evil files\n", "names the NSS module `evil`"),
    ("/app/ssl/openssl.cnf", "[s]\nmodule = /app/evil.so\n", "loads /app/evil.so"),
    ("/app/lib/ossl-modules/legacy.so", "x", "OpenSSL module"),
])
def test_a_stand_in_inside_the_set_is_a_finding(layers: tuple[Path, Path, Path], path: str,
                                                data: str, why: str | None) -> None:
    lower, upper, _ = layers
    tests_only = TransferSet((*SET.roots, TransferRoot(path, "tests")))
    put(upper, path, data, mode=0o755)
    result = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                          transfer=tests_only)
    if why is None:
        assert result.all_findings() == [] and path in [e.path for e in result.carried]
    else:
        assert any(why in f and path in f for f in result.all_findings()), result.all_findings()
        assert path not in [e.path for e in result.carried]


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
