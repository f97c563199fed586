"""Honest work a cold fairness round scored 0 (issue 42), on overlay-shaped layers and
image views on disk (no engine): each honest twin is carried (or said with a hint), and
each attack twin stays out. The engine's per-container files through real containers are
in ``test_review_carry_rule_engine_files.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.review import transfer as transfer_mod
from termgrade.scoring.review.engine_files import NOT_ASKED, sort_engine_files
from termgrade.scoring.review.integrity import LayerReview, review_layer
from termgrade.scoring.review.transfer import (
    ACCOUNT_FILES,
    CLOSURE_HINT,
    TransferRoot,
    TransferSet,
    derive_transfer_set,
    instruction_paths,
    named_paths,
)
from termgrade.task import load_task
from tests.support.overlay_layers import POLICY, put
from tests.support.task_dirs import write_task

PASSWD = ("root:x:0:0:root:/root:/bin/bash\n"
          "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
          "deploy:x:1000:1000::/home/deploy:/bin/bash\n"
          "alice:x:1001:1001::/srv/alice:/bin/bash\n")


@pytest.fixture
def view(tmp_path: Path) -> Path:
    """The image's filesystem (the lower layer and its view are one directory here)."""
    view = tmp_path / "image"
    put(view, "/etc/passwd", PASSWD)
    put(view, "/etc/shells", "/bin/sh\n/bin/bash\n")
    put(view, "/etc/webfront/sites-available/shop", "listen 8080\n")
    put(view, "/etc/webfront/sites-enabled", None)
    os.symlink("../sites-available/shop", view / "etc/webfront/sites-enabled/shop")
    for directory in ("/app", "/tests", "/usr/include", "/home/deploy", "/srv/alice",
                      "/opt/venv/bin"):
        put(view, directory, None)
    put(view, "/tests/expected.txt", "8081\n")
    put(view, "/usr/include/stdio.h", "/* image */\n")
    return view


def _set(tmp_path: Path, view: Path | None, instruction: str) -> TransferSet:
    root = write_task(tmp_path / "task", instruction=instruction)
    return derive_transfer_set(load_task(root), workdir="/app",
                               view=str(view) if view else None)


def _review(view: Path, upper: Path, transfer: TransferSet) -> LayerReview:
    return review_layer(walk_upper(str(upper)), LowerView([str(view)]), POLICY,
                        transfer=transfer)


def _carried(review: LayerReview) -> list[str]:
    return [e.path for e in review.carried]


# 1. the engine's per-container files --------------------------------------------------

HOSTS = b"127.0.0.1\tlocalhost\n127.0.0.1 db.internal\n"
BASE = TransferSet((TransferRoot("/app", "workdir"),
                    *(TransferRoot(p, "accounts") for p in ACCOUNT_FILES)))


@pytest.mark.parametrize("why", ["instruction", "declared", "reference"])
def test_an_asked_for_hosts_edit_is_carried(why: str) -> None:
    asked = TransferSet((*BASE.roots, TransferRoot("/etc/hosts", why)))
    review = LayerReview()
    assert sort_engine_files({"/etc/hosts": HOSTS}, asked, review) == {"/etc/hosts": HOSTS}
    assert review.left_out == 0 and "/etc/hosts" in review.footprint


def test_an_unasked_engine_file_edit_is_said_not_carried() -> None:
    """The attack twin: an /etc/hosts the task did not ask for stays A's, and is said."""
    review = LayerReview()
    tests_only = TransferSet((*BASE.roots, TransferRoot("/etc/hosts", "tests")))
    for transfer in (BASE, tests_only):
        review = LayerReview()
        assert sort_engine_files({"/etc/hosts": HOSTS, "/etc/resolv.conf": b"x"}, transfer,
                                 review) == {}
        summary = review.left_out_summary() or ""
        assert f"/etc/hosts ({NOT_ASKED})" in summary and "/etc/resolv.conf" in summary
    # too large is not carried even where asked, and said
    asked = TransferSet((*BASE.roots, TransferRoot("/etc/hosts", "instruction")))
    review = LayerReview()
    assert sort_engine_files({"/etc/hosts": None}, asked, review) == {}
    assert "MiB" in (review.left_out_summary() or "")


def test_the_instruction_naming_etc_hosts_asks_for_it(tmp_path: Path, view: Path) -> None:
    found = _set(tmp_path, view, "Add an entry to `/etc/hosts` so that `db.internal` "
                                 "resolves to 127.0.0.1.\n")
    assert found.asked("/etc/hosts") and not found.asked("/etc/resolv.conf")


# 2. a named path whose last name is an image symlink -----------------------------------

def test_a_named_image_link_asks_for_its_target_file(tmp_path: Path, view: Path) -> None:
    found = _set(tmp_path, view, "Change `/etc/webfront/sites-enabled/shop` to port 8081.\n")
    assert found.asked("/etc/webfront/sites-enabled/shop")  # the link itself (sed -i)
    assert found.asked("/etc/webfront/sites-available/shop")  # written through (python)
    assert not found.asked("/etc/webfront/sites-available/other")  # the exact file only
    upper = tmp_path / "upper"
    put(upper, "/etc/webfront/sites-available/shop", "listen 8081\n")
    review = _review(view, upper, found)
    assert "/etc/webfront/sites-available/shop" in _carried(review), \
        review.left_out_summary()
    # the control: without the final name resolved, the write through the link is left out
    unresolved = _set(tmp_path / "b", None, "Change `/etc/webfront/sites-enabled/shop`.\n")
    assert "/etc/webfront/sites-available/shop" not in _carried(
        _review(view, upper, unresolved))


@pytest.mark.parametrize(("target", "not_asked"), [
    ("/tests/expected.txt", "/tests/expected.txt"),  # the grader's: never a root
    ("/tests", "/tests/expected.txt"),
    ("/usr/include", "/usr/include/stdio.h"),  # a system tree is never asked for whole
    ("/etc", "/etc/passwd"),  # too wide
    ("/", "/etc/passwd"),
])
def test_a_named_link_never_widens_to_a_tree_or_the_grader(tmp_path: Path, view: Path,
                                                           target: str,
                                                           not_asked: str) -> None:
    put(view, "/srv/site", None)
    put(view, "/etc/site.d", None)
    os.symlink(target, view / "srv/site/link")
    os.symlink(target, view / "etc/site.d/link")
    found = _set(tmp_path, view, "Edit `/srv/site/link` and `/etc/site.d/link`.\n")
    assert found.asked("/srv/site/link")
    assert not found.asked(not_asked) and target not in {r.path for r in found.roots}


def test_a_named_link_to_one_system_file_asks_for_that_file_alone(tmp_path: Path,
                                                                  view: Path) -> None:
    put(view, "/srv/site", None)
    os.symlink("/usr/include/stdio.h", view / "srv/site/header")
    found = _set(tmp_path, view, "Fix `/srv/site/header`.\n")
    assert found.asked("/usr/include/stdio.h")
    assert not found.asked("/usr/include/stdlib.h") and "/usr/include" not in {
        r.path for r in found.roots}


# 3. tools' backup and lock files: not carried, not said ---------------------------------

def test_account_backups_and_loader_cache_are_quiet(tmp_path: Path, view: Path) -> None:
    noise = ("/etc/passwd-", "/etc/group-", "/etc/shadow-", "/etc/gshadow-",
             "/etc/.pwd.lock", "/etc/subuid-", "/etc/subgid-", "/etc/ld.so.cache",
             "/var/cache/ldconfig/aux-cache")
    for path in (*noise, "/etc/crontab"):
        put(view, path, "image\n")
    upper = tmp_path / "upper"
    for path in (*noise, "/etc/crontab"):
        put(upper, path, "useradd's\n")
    review = _review(view, upper, BASE)
    summary = review.left_out_summary() or ""
    assert not set(_carried(review)) & {*noise, "/etc/crontab"}
    assert "/etc/crontab" in summary and review.left_out == 1, summary  # real ones said
    assert not any(path in summary for path in noise), summary


# 4. the hint for a left-out entry in the verifier's closure ---------------------------

def test_a_pip_console_script_in_the_closure_gets_the_hint(tmp_path: Path,
                                                           view: Path) -> None:
    found = _set(tmp_path, view, "Install a command `wordstat` on the system `PATH`.\n")
    upper = tmp_path / "upper"
    put(upper, "/opt/venv/bin/wordstat", "#!/opt/venv/bin/python\n", mode=0o755)
    put(upper, "/opt/venv/lib/python3.11/site-packages/wordstat_cli.py", "x\n")
    review = _review(view, upper, found)
    assert review.left_out_notes["/opt/venv/bin/wordstat"] == (
        f"`wordstat` is named by the task's text; {CLOSURE_HINT}")
    assert "virtual environment" in (review.left_out_summary() or "")
    assert review.all_findings() == [] and not _carried(review)


# 5. ~user/x and ~/x about another user ------------------------------------------------

def test_tilde_user_is_that_users_home_from_the_image() -> None:
    homes = {"root": "/root", "deploy": "/home/deploy", "alice": "/srv/alice"}
    assert named_paths("Keep it in ~deploy/bin and ~alice/notes.txt, not ~nobody/x.",
                       homes) == ["/home/deploy/bin", "/srv/alice/notes.txt"]
    assert named_paths("~/bin and ~root/x", homes) == ["/root/bin", "/root/x"]


def test_tilde_in_an_instruction_about_one_user_is_also_that_users_home() -> None:
    homes = {"root": "/root", "deploy": "/home/deploy", "alice": "/srv/alice"}
    regular = ("deploy", "alice")
    text = ("The user `deploy` keeps its own scripts in its `~/bin`; make sure that "
            "directory is on deploy's PATH.")
    assert instruction_paths(text, homes, regular) == ["/root/bin", "/home/deploy/bin"]
    # two users named: which one `~` means is not known; root's home only
    both = text + " alice's too."
    assert instruction_paths(both, homes, regular) == ["/root/bin"]
    # a system account's name as a word (daemon) is no user the text is about
    assert instruction_paths("Run the daemon from ~/bin.", homes, regular) == ["/root/bin"]


def test_the_derived_set_reads_homes_from_the_images_passwd(tmp_path: Path,
                                                            view: Path) -> None:
    found = _set(tmp_path, view, "As the user `deploy`, keep scripts in `~/bin`, and "
                                 "notes in ~alice/notes.txt.\n")
    assert found.asked("/home/deploy/bin") and found.asked("/srv/alice/notes.txt")
    assert found.asked("/root/bin")


def test_homes_are_not_read_without_the_image(tmp_path: Path) -> None:
    found = _set(tmp_path, None, "Keep notes in ~alice/notes.txt.\n")
    assert not any(r.path.endswith("notes.txt") for r in found.roots)
    assert transfer_mod.image_homes(str(tmp_path / "missing")) == ({}, frozenset())


@pytest.mark.parametrize("venv", ["/usr/local/lib/wordstat", "/usr/local/wordstat",
                                  "/usr/share/wordstat/venv"])
def test_a_virtual_environment_in_a_system_tree_keeps_its_python(
        tmp_path: Path, venv: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fairness round 9 (N4): ``python3 -m venv /usr/local/lib/wordstat`` makes a
    ``bin/python3`` (a link to the image's, or a copy) that no compiler runs: only a
    compiler's own ``bin`` (``/usr/<triplet>/bin``) is searched before PATH. Its ``as``
    there stays a stand-in; the old rule (any ``bin`` of a system tree) left the venv out."""
    from termgrade.scoring.review import lookups

    view = tmp_path / "image"
    put(view, "/usr/bin/python3", "elf", mode=0o755)
    put(view, "/usr/bin/as", "elf", mode=0o755)
    for directory in ("/usr/local/lib", "/usr/share", "/usr/x86_64-linux-gnu"):
        put(view, directory, None)
    upper = tmp_path / "upper"
    put(upper, f"{venv}/bin/python3", "elf", mode=0o755)
    put(upper, f"{venv}/lib/python3.11/site-packages/wordstat.py", "X = 1\n")
    put(upper, "/usr/x86_64-linux-gnu/bin/as", "fake", mode=0o755)

    def carried() -> set[str]:
        review = review_layer(walk_upper(str(upper)), LowerView([str(view)]), POLICY,
                              transfer=TransferSet((TransferRoot("/app", "workdir"),)))
        return {e.path for e in review.carried}

    found = carried()
    assert f"{venv}/bin/python3" in found and "/usr/x86_64-linux-gnu/bin/as" not in found
    monkeypatch.setattr(lookups, "_toolchain_bin",
                        lambda d: d.rsplit("/", 1)[-1] in ("bin", "sbin"))  # the old rule
    assert f"{venv}/bin/python3" not in carried()
