"""The carry rule on overlay-shaped layers (no engine): created work reaches B wherever it
lies, changes to the image's files only where the task asks, and what would stand in for
what the tests trust is judged by what it would change, wherever it lies.

Each attack has its honest twin and a control: the rule patched out, the attack's entry
reaches B. The end-to-end proofs through real containers are in
``test_review_transfer_attacks.py`` and ``test_review_carry_rule_env.py`` (the image's ``ENV``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.review import carried_links, integrity, links_in_b, lookups, standins
from termgrade.scoring.review.integrity import LayerReview, review_layer
from termgrade.scoring.review.transfer import ACCOUNT_FILES, TransferRoot, TransferSet
from tests.support.overlay_layers import POLICY, put

SET = TransferSet((TransferRoot("/app", "workdir"),
                   *(TransferRoot(p, "accounts") for p in ACCOUNT_FILES)))
PASSWD = ("root:x:0:0:root:/root:/bin/bash\n"
          "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")


@pytest.fixture
def lower(tmp_path: Path) -> Path:
    lower = tmp_path / "lower"
    for path in ("/usr/bin/bash", "/usr/bin/sha256sum", "/usr/bin/python3.11",
                 "/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/share/perl5/Shop/Util.pm",
                 "/usr/include/stdio.h", "/usr/lib/x86_64-linux-gnu/pkgconfig/zlib.pc"):
        put(lower, path)
    for directory in ("/app", "/tmp", "/tests", "/etc/perl", "/usr/local/include",
                      "/usr/local/bin", "/usr/local/lib/pkgconfig"):
        put(lower, directory, None)
    put(lower, "/etc/passwd", PASSWD)
    put(lower, "/etc/shells", "# valid login shells\n/bin/sh\n/bin/bash\n/usr/bin/bash\n")
    os.symlink("/etc/alternatives/editor", lower / "usr/bin/editor")
    put(lower, "/etc/alternatives", None)
    os.symlink("/usr/bin/vim.tiny", lower / "etc/alternatives/editor")
    return lower


def _review(lower: Path, upper: Path, transfer: TransferSet = SET) -> LayerReview:
    return review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                        transfer=transfer)


def _carried(review: LayerReview) -> list[str]:
    return [e.path for e in review.carried]


@pytest.mark.parametrize("path", [
    "/usr/bin/shop",  # make install PREFIX=/usr where the reference used /usr/local
    "/var/spool/cron/crontabs/root",  # crontab - instead of /etc/cron.d
    "/usr/lib/systemd/system/shop.service",
    "/opt/shop/lib/libshop.so.1",  # found through an ld.so.conf.d entry
    "/etc/ld.so.conf.d/shop.conf",
    "/root/.local/bin/shop",
    "/srv/db/shop.sqlite",  # a config in /app points at it
    "/data/alice/notes.txt",  # the home of a user created outside /home
    "/app-hooks/pre-commit",  # core.hooksPath naming a new directory
    "/usr/share/perl5/Shop/New.pm",  # a new module: shadows nothing
    "/usr/local/include/shop.h",
])
def test_honest_work_created_anywhere_is_carried(lower: Path, tmp_path: Path,
                                                 path: str) -> None:
    upper = tmp_path / "upper"
    put(upper, path, "x", mode=0o755)
    review = _review(lower, upper)
    assert review.all_findings() == [] and path in _carried(review), review.left_out_summary()


@pytest.mark.parametrize(("path", "why"), [
    ("/usr/local/bin/sha256sum", "shadows the image's `sha256sum`"),
    ("/usr/local/bin/python3.13", "shadows the verifier's `python3.13`"),  # uvx -p 3.13
    ("/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libz.so.1", "shared library"),
    ("/etc/perl/Shop/Util.pm", "shadows the image's Perl module /usr/share/perl5/Shop/Util.pm"),
    ("/usr/local/include/stdio.h", "C header /usr/include/stdio.h"),
    ("/usr/local/lib/pkgconfig/zlib.pc", "pkg-config file"),
    ("/conftest.py", "pytest reads /conftest.py"),
    ("/pytest.ini", "pytest reads /pytest.ini"),
    ("/root/.bash_profile", "a shell start-up file"),  # bash -lc in a test runs it first
    ("/etc/profile.d/zz.sh", "a shell start-up file"),
    ("/data/alice/.bashrc", "a shell start-up file"),
])
def test_a_created_stand_in_is_left_out_and_said(lower: Path, tmp_path: Path, path: str,
                                                 why: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    upper = tmp_path / "upper"
    put(upper, path, "#!/bin/sh\nexit 0\n", mode=0o755)
    review = _review(lower, upper)
    assert path not in _carried(review)
    assert why in (review.left_out_summary() or ""), review.left_out_summary()
    # the control: with the stand-in rules patched out, the same entry reaches B
    monkeypatch.setattr(integrity, "stands_in", lambda *a, **k: None)
    monkeypatch.setattr(POLICY.__class__, "shadows", lambda *a, **k: None)
    assert path in _carried(_review(lower, upper))


def test_start_up_files_where_asked_or_copied_from_skel_are_carried(lower: Path,
                                                                  tmp_path: Path) -> None:
    """The twins: a profile.d file the reference (or the instruction) asks for, and the
    dotfiles ``useradd -m`` copies from the image's /etc/skel."""
    put(lower, "/etc/skel/.bashrc", "# skel\n")
    upper = tmp_path / "upper"
    put(upper, "/etc/profile.d/shop.sh", "export PATH=$PATH:/opt/shop/bin\n")
    put(upper, "/home/alice/.bashrc", "# skel\n")
    asked = TransferSet((*SET.roots, TransferRoot("/etc/profile.d/shop.sh", "reference")))
    review = _review(lower, upper, asked)
    assert review.all_findings() == []
    assert {"/etc/profile.d/shop.sh", "/home/alice/.bashrc"} <= set(_carried(review))
    put(upper, "/home/alice/.bashrc", "sha256sum() { echo forged; }\n")
    assert "/home/alice/.bashrc" not in _carried(_review(lower, upper, asked))
    # a start-up file the tests name in a home the agent made (the task checks a new
    # user's dotfile) is what the task asks for; in root's home it is not
    named = TransferSet((*asked.roots, TransferRoot("/home/alice/.bashrc", "tests"),
                         TransferRoot("/root/.bash_profile", "tests")))
    put(lower, "/root", None)
    put(upper, "/root/.bash_profile", "sha256sum() { echo forged; }\n")
    review = _review(lower, upper, named)
    assert "/home/alice/.bashrc" in _carried(review)
    assert "/root/.bash_profile" not in _carried(review)


def test_the_reference_planting_pytest_config_above_the_tests_is_a_finding(
        lower: Path, tmp_path: Path) -> None:
    """Where the reference's footprint asks for /conftest.py, it is a finding (the
    reference is then unsatisfiable), never a path carried for every agent."""
    upper = tmp_path / "upper"
    put(upper, "/conftest.py", "def pytest_runtest_makereport(): pass\n")
    asked = TransferSet((*SET.roots, TransferRoot("/conftest.py", "reference")))
    review = _review(lower, upper, asked)
    assert any("/conftest.py" in f and "pytest reads" in f for f in review.all_findings())


@pytest.mark.parametrize(("target", "why"), [
    ("/tests/expected_output.txt", "resolves into the grader's /tests"),
    ("../tests/expected_output.txt", "resolves into the grader's /tests"),
    ("/logs/verifier/reward.txt", "resolves into the grader's /logs"),
    ("via/../tests/expected_output.txt", "resolves into the grader's /tests"),  # via -> /
    ("/app/zz/expected_output.txt", "resolves into the grader's /tests"),  # zz is later
    ("/tmp/pytest-of-root/pytest-0/expected.txt", "lacks at its start"),
])
def test_a_symlink_is_judged_by_where_it_resolves_in_b(lower: Path, tmp_path: Path,
                                                       target: str, why: str,
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    upper = tmp_path / "upper"
    (upper / "app").mkdir(parents=True)
    os.symlink("/", upper / "app/via")  # honest on its own: resolves to the image's root
    os.symlink(target, upper / "app/zanswer.txt")
    os.symlink("/tes" + "ts", upper / "app/zz")  # a finding itself; walked after zanswer
    review = _review(lower, upper)
    found = [f for f in review.all_findings() if "/app/zanswer.txt" in f]
    assert found and why in found[0], review.all_findings()
    assert "/app/zanswer.txt" not in _carried(review)
    monkeypatch.setattr(carried_links, "carried_link", lambda *a, **k: None)
    monkeypatch.setattr(carried_links, "link_target_in_b", lambda *a, **k: None)
    assert "/app/zanswer.txt" in _carried(_review(lower, upper))


@pytest.mark.parametrize("target", ["/usr/bin/python3.11", "/opt/shop/bin/shop", "main.py",
                                    "/dev/null", "/tmp/made-by-me"])
def test_honest_symlinks_are_carried(lower: Path, tmp_path: Path, target: str) -> None:
    upper = tmp_path / "upper"
    put(upper, "/tmp/made-by-me")
    put(upper, "/opt/shop/bin/shop", "#!/bin/sh\n", mode=0o755)
    put(upper, "/app/main.py")
    (upper / "app").mkdir(parents=True, exist_ok=True)
    os.symlink(target, upper / "app/link")
    transfer = TransferSet((*SET.roots, TransferRoot("/tmp/made-by-me", "tests")))
    review = _review(lower, upper, transfer)
    assert review.all_findings() == [] and "/app/link" in _carried(review)


def test_created_users_are_merged_and_the_images_entries_kept(lower: Path,
                                                              tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    put(upper, "/etc/passwd", "root:x:0:0:root:/root:/app/evil.sh\n"  # root's shell changed
                              "alice:x:1000:1000::/data/alice:/bin/bash\n"  # honest new user
                              "mallory:x:1001:1001::/home/m:/app/evil.sh\n")  # daemon removed
    put(upper, "/data/alice/notes.txt")
    review = _review(lower, upper)
    assert "/etc/passwd" in _carried(review) and review.all_findings() == []
    merged = (upper / "etc/passwd").read_text()
    assert merged == PASSWD + "alice:x:1000:1000::/data/alice:/bin/bash\n"
    summary = review.left_out_summary() or ""
    assert "`mallory` left out" in summary and "change(s) to the image's own entries" in summary
    assert "/data/alice/notes.txt" in _carried(review)
    # the control: named by the instruction, the file is carried as the agent wrote it
    put(upper, "/etc/passwd", "root:x:0:0:root:/root:/app/evil.sh\n")
    named = TransferSet((*SET.roots, TransferRoot("/etc/passwd", "instruction")))
    _review(lower, upper, named)
    assert (upper / "etc/passwd").read_text() == "root:x:0:0:root:/root:/app/evil.sh\n"


def test_an_account_file_made_a_symlink_stays_out(lower: Path, tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    (upper / "etc").mkdir(parents=True)
    os.symlink("/app/passwd", upper / "etc/passwd")
    put(upper, "/app/passwd", PASSWD)
    review = _review(lower, upper)
    assert "/etc/passwd" not in _carried(review)
    assert "not a regular file" in (review.left_out_summary() or "")


def test_an_alternatives_link_repointed_stays_the_images(lower: Path, tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    (upper / "etc/alternatives").mkdir(parents=True)
    os.symlink("/app/evil", upper / "etc/alternatives/editor")
    review = _review(lower, upper)
    assert "/etc/alternatives/editor" not in _carried(review)
    assert "/etc/alternatives/editor" in review.left_out_paths


def test_what_the_verifiers_processes_write_gets_the_stand_in_review(
        lower: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """B's layer after the tests ran: a program the tests ran (agent code) added a
    ``sha256sum`` earlier on PATH for a later test; a log file beside it is honest."""
    layer = tmp_path / "b-layer"
    put(layer, "/usr/local/bin/sha256sum", "#!/bin/sh\necho ok\n", mode=0o755)
    put(layer, "/app/server.log", "started\n")
    after = review_layer(walk_upper(str(layer)), LowerView([str(lower)]), POLICY,
                         standins=SET)
    assert [f for f in after.all_findings() if "sha256sum" in f], after.all_findings()
    assert not [f for f in after.all_findings() if "server.log" in f]
    plain = review_layer(walk_upper(str(layer)), LowerView([str(lower)]), POLICY)
    assert plain.all_findings() == []  # the control: without the stand-in review


def test_scratch_is_not_carried_unless_named(lower: Path, tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    put(upper, "/tmp/build/shop.o")
    put(lower, "/root", None)
    put(upper, "/root/.cache/pip/wheels/x.whl")
    put(upper, "/tmp/report.txt")
    named = TransferSet((*SET.roots, TransferRoot("/tmp/report.txt", "instruction")))
    review = _review(lower, upper, named)
    assert _carried(review) == ["/tmp/report.txt"]


def test_the_search_path_rule_reads_the_images_order(lower: Path) -> None:
    view = LowerView([str(lower)])
    # an image module earlier in @INC than the new one: the new one shadows nothing
    put(lower, "/etc/perl/Early.pm")
    assert lookups.shadowed_in_search_path("/usr/share/perl5/Early.pm", view) is None
    assert lookups.shadowed_in_search_path("/usr/share/perl5/Shop/Util.pm", view) is None


LDCONFIG_BEFORE = """\
2 libs found in cache `/etc/ld.so.cache'
\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1
\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6
"""


def test_the_rebuilt_loader_cache_is_compared_per_soname_hwcaps_included() -> None:
    """A glibc-hwcaps line for an image soname is one the loader prefers on a CPU that
    has it: a new path for the soname, whatever its ABI text (a line-by-line comparison
    keyed by the whole name missed it); a new soname of the agent's is no finding."""
    from termgrade.scoring.verifier.loader import parse_listing, shadowed_sonames

    after = LDCONFIG_BEFORE + (
        '\tlibz.so.1 (libc6,x86-64, hwcap: "x86-64-v3") => '
        "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libshop.so\n"
        "\tlibshop.so.1 (libc6,x86-64) => /usr/local/lib/libshop.so.1\n")
    found = shadowed_sonames(parse_listing(LDCONFIG_BEFORE), parse_listing(after))
    assert len(found) == 1 and "takes the image's soname libz.so.1" in found[0]
    assert "glibc-hwcaps/x86-64-v3/libshop.so" in found[0]
    # the control: keyed by the whole line's name (ABI text included), it passes unseen
    keyed = {line.strip().partition(" => ")[0]: line for line in after.splitlines()}
    assert 'libz.so.1 (libc6,x86-64, hwcap: "x86-64-v3")' in keyed
    assert shadowed_sonames(parse_listing(LDCONFIG_BEFORE), parse_listing(LDCONFIG_BEFORE)) == []


def test_symlinks_the_tests_make_in_their_temporary_directories_are_no_finding(
        lower: Path, tmp_path: Path) -> None:
    """B's layer after the verifier ran holds the tests' own symlinks (tidy-filenames
    makes links under pytest's tmp_path): the links are judged when the agent's work is
    carried, not in B's layer afterwards (a verified corpus task was unsatisfiable)."""
    layer = tmp_path / "b-layer"
    (layer / "tmp/pytest-of-root/pytest-0/t0/box").mkdir(parents=True)
    os.symlink("/tmp/pytest-of-root/pytest-0/t0/target",
               layer / "tmp/pytest-of-root/pytest-0/t0/box/link")
    after = review_layer(walk_upper(str(layer)), LowerView([str(lower)]), POLICY,
                         standins=SET)
    assert after.all_findings() == []


@pytest.mark.parametrize("target", ["/proc/self/root/tests/expected.txt",
                                    "/proc/self/cwd/expected.txt",
                                    "/proc/1/cwd/expected.txt", "/dev/fd/5",
                                    "/proc/thread-self/root/tests/x"])
def test_a_symlink_through_a_per_reader_magic_link_is_a_finding(
        lower: Path, tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cold attack's answer: a link through /proc/self/root or /proc/self/cwd (a
    test's working directory is /tests) reads the hidden expected output."""
    upper = tmp_path / "upper"
    (upper / "app").mkdir(parents=True)
    os.symlink(target, upper / "app/answer.txt")
    review = _review(lower, upper)
    assert any("/app/answer.txt" in f and "resolves per reader" in f
               for f in review.all_findings()), review.all_findings()
    monkeypatch.setattr(links_in_b, "_MAGIC", __import__("re").compile("(?!)"))
    monkeypatch.setattr(carried_links, "link_target_in_b", lambda *a, **k: None)
    assert "/app/answer.txt" in _carried(_review(lower, upper))


@pytest.mark.parametrize("target", ["/dev/stdout", "/proc/self/fd/1", "/dev/null"])
def test_a_log_symlinked_to_a_standard_stream_is_carried(lower: Path, tmp_path: Path,
                                                         target: str) -> None:
    upper = tmp_path / "upper"
    (upper / "app").mkdir(parents=True)
    os.symlink(target, upper / "app/server.log")
    review = _review(lower, upper)
    assert review.all_findings() == [] and "/app/server.log" in _carried(review)


@pytest.mark.parametrize(("path", "why"), [
    ("/usr/bin/python3.11._pth", "Python path configuration"),
    ("/usr/local/bin/python3._pth", "Python path configuration"),
    ("/root/.gitconfig", "an image tool reads unasked"),
    ("/etc/gitconfig", "an image tool reads unasked"),
    ("/root/.config/git/attributes", "an image tool reads unasked"),
    ("/root/.magic.mgc", "an image tool reads unasked"),
    ("/usr/lib/locale/locale-archive", "an image tool reads unasked"),
    # a test-time `pip install` / `uv pip install` would install from the agent's index
    ("/etc/pip.conf", "an image tool reads unasked"),
    ("/root/.config/pip/pip.conf", "an image tool reads unasked"),
    ("/root/.pip/pip.conf", "an image tool reads unasked"),
    ("/root/.config/uv/uv.toml", "an image tool reads unasked"),
])
def test_files_the_python_startup_or_an_image_tool_reads_unasked_are_left_out(
        lower: Path, tmp_path: Path, path: str, why: str) -> None:
    """The cold attack's ``python3.11._pth`` (it set sys.path for every Python in B, pytest
    included, to a directory with the agent's sitecustomize) and the configurations git,
    file and libc read unasked."""
    put(lower, "/usr/lib/locale", None)
    _assert_left_out(lower, tmp_path, path, why, "/usr/lib/pyx\nimport site\n")


def _assert_left_out(lower: Path, tmp_path: Path, path: str, why: str, data: str) -> None:
    """``path`` created with ``data`` stays out of B, with ``why`` in what is said."""
    upper = tmp_path / "upper"
    put(upper, path, data, mode=0o755)
    review = _review(lower, upper)
    assert path not in _carried(review)
    assert why in (review.left_out_summary() or ""), review.left_out_summary()


def test_a_gitconfig_the_instruction_names_is_carried(lower: Path, tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    put(upper, "/root/.gitconfig", "[user]\n\tname = Ada\n")
    named = TransferSet((*SET.roots, TransferRoot("/root/.gitconfig", "instruction")))
    assert "/root/.gitconfig" in _carried(_review(lower, upper, named))


def test_named_paths_reads_home_spellings_and_stops_at_a_comma() -> None:
    from termgrade.scoring.review.transfer import named_paths

    text = "Append to $HOME/.bashrc, `${HOME}/.gitconfig`, ~root/x.txt; /etc/cron.d/backup,and"
    assert named_paths(text) == ["/root/.bashrc", "/root/.gitconfig", "/root/x.txt",
                                 "/etc/cron.d/backup"]


def test_every_carried_file_counts_as_the_agents_when_mapped(lower: Path,
                                                             tmp_path: Path) -> None:
    """A file the loader or ``mmap`` maps needs no exec bit and no ``.so`` name: a
    process that asks for a key while mapping any carried file (a library named
    ``data.bin``, mode 0644) is refused. The roots the broker gets cover it; the
    image's own files beside it are not the agent's."""
    from termgrade.scoring import score
    from termgrade.scoring.incontainer.broker_proc import foreign_in_maps

    upper = tmp_path / "upper"
    put(upper, "/app/data.bin", "\x7fELF", mode=0o644)
    put(upper, "/opt/pkg/lib/helper.dat", "\x7fELF", mode=0o644)
    review = _review(lower, upper)
    roots = score.transfer_roots(review, SET)
    assert "/opt/pkg" in roots and "/app/data.bin" in roots
    maps = ("7f00-7f01 r-xp 00000000 00:00 1 /app/data.bin\n"
            "7f01-7f02 r-xp 00000000 00:00 2 /opt/pkg/lib/helper.dat\n"
            "7f02-7f03 r-xp 00000000 00:00 3 /usr/lib/x86_64-linux-gnu/libz.so.1\n")
    assert foreign_in_maps(maps, {"transfer_roots": roots, "trusted": []}) == [
        "/app/data.bin", "/opt/pkg/lib/helper.dat"]
    # the control: the old rule (an exec bit or a .so name) named neither
    old = [e.path for e in review.carried if not e.is_dir
           and (e.mode & 0o111 or standins.is_shared_object(os.path.basename(e.path)))]
    assert foreign_in_maps(maps, {"transfer_roots": old, "trusted": []}) == []


@pytest.mark.parametrize("where", ["/app/answer.txt", "/srv/out/answer.txt"])
def test_a_link_b_could_only_fill_by_the_tests_writes_is_left_out(
        lower: Path, tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second cold attack: the answer a symlink to a path the tests write later
    (``/srv/expected.txt``: absent when B starts), and a link the agent made at a path
    only the tests name, pointing at its answer (the tests write the secret through it).
    Both left out and said; with the rule patched out, both reach B."""
    upper = tmp_path / "upper"
    put(upper, "/app/real.txt", "my answer")
    (upper / where.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    os.symlink("/srv/expected.txt", upper / where.lstrip("/"))
    (upper / "var/lib/shop").mkdir(parents=True)
    os.symlink("/app/real.txt", upper / "var/lib/shop/expected.txt")
    named = TransferSet((*SET.roots, TransferRoot("/var/lib/shop/expected.txt", "tests")))
    review = _review(lower, upper, named)
    summary = review.left_out_summary() or ""
    assert where not in _carried(review) and "lacks at its start" in summary
    # a link to a file B has is carried, watched while the tests run (a write through it
    # is a finding: tests/scoring/test_review_watched_links.py)
    assert review.watched_links == {"/var/lib/shop/expected.txt": "/app/real.txt"}
    assert review.all_findings() == []
    monkeypatch.setattr(carried_links, "link_target_in_b", lambda *a, **k: None)
    monkeypatch.setattr(TransferSet, "tests_only", lambda self, path: False)
    again = _carried(_review(lower, upper, named))
    assert where in again and "/var/lib/shop/expected.txt" in again


def test_a_hard_link_the_agent_made_where_only_the_tests_name_a_path_is_left_out(
        lower: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second cold attack: ``ln /app/answer.txt /tmp/expected.txt`` where the tests
    write the secret to /tmp/expected.txt, then compare: the write lands in the answer.
    Left out and said; honest hard links elsewhere (a backup tree, a layer's shapes) keep
    their shared inode. With the rule patched out, the link reaches B."""
    upper = tmp_path / "upper"
    put(upper, "/app/answer.txt", "my answer")
    (upper / "tmp").mkdir()
    os.link(upper / "app/answer.txt", upper / "tmp/expected.txt")
    put(upper, "/opt/backup/a.txt", "same")
    os.link(upper / "opt/backup/a.txt", upper / "opt/backup/b.txt")
    named = TransferSet((*SET.roots, TransferRoot("/tmp/expected.txt", "tests")))
    review = _review(lower, upper, named)
    assert "/tmp/expected.txt" not in _carried(review)
    assert "a hard link the agent made" in (review.left_out_summary() or "")
    assert {"/app/answer.txt", "/opt/backup/a.txt", "/opt/backup/b.txt"} <= set(
        _carried(review))
    monkeypatch.setattr(TransferSet, "tests_only", lambda self, path: False)
    assert "/tmp/expected.txt" in _carried(_review(lower, upper, named))


@pytest.mark.parametrize(("path", "why"), [
    ("/usr/lib/gcc/x86_64-linux-gnu/12/include/string.h", "the compiler's own tree"),
    ("/usr/lib/gcc/x86_64-linux-gnu/12/specs", "the compiler's own tree"),
    ("/usr/libexec/gcc/x86_64-linux-gnu/12/as", "the compiler's own tree"),
    ("/usr/share/git-core/templates/hooks/pre-commit", "git"),
    ("/usr/local/include/local.mk", "where make finds a makefile"),
    ("/root/.jq", "an image tool reads unasked"),
    ("/usr/lib/x86_64-linux-gnu/perl/5.36/Digest/SHA.pmc", "compiled Perl module"),
])
def test_the_second_cold_attacks_plants_are_left_out(lower: Path, tmp_path: Path, path: str,
                                                     why: str) -> None:
    put(lower, "/usr/lib/x86_64-linux-gnu/perl/5.36/Digest/SHA.pm")
    for tree in ("/usr/lib/gcc", "/usr/libexec/gcc", "/usr/share/git-core"):
        put(lower, tree, None)  # the image's compiler and git: their trees are read unasked
    _assert_left_out(lower, tmp_path, path, why, "x")


def test_a_repository_at_the_root_is_left_out(lower: Path, tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    put(upper, "/.git/config", "[diff]\n\texternal = /app/x\n")
    review = _review(lower, upper)
    assert not [p for p in _carried(review) if p.startswith("/.git")]
    assert "a repository above the tests" in (review.left_out_summary() or "")


def test_a_bundle_with_an_image_library_name_in_the_workdir_is_carried(
        lower: Path, tmp_path: Path) -> None:
    """The second cold attack's honest zero: a PyInstaller/conda tree in /app ships its
    own libz.so.1; the loader never finds it by name there (an ld.so.conf.d entry naming
    it would show in the grader's ldconfig comparison, a finding)."""
    upper = tmp_path / "upper"
    put(upper, "/app/dist/counter/_internal/libz.so.1", "\x7fELF")
    put(upper, "/opt/conda/lib/libz.so.1", "\x7fELF")
    review = _review(lower, upper)
    assert review.all_findings() == []
    assert {"/app/dist/counter/_internal/libz.so.1", "/opt/conda/lib/libz.so.1"} <= set(
        _carried(review))
    put(upper, "/usr/local/lib/libz.so.1", "\x7fELF")  # where the loader looks: left out
    assert "/usr/local/lib/libz.so.1" not in _carried(_review(lower, upper))


def test_only_stand_ins_that_no_asking_excuses_count_against_a_reference(
        lower: Path, tmp_path: Path) -> None:
    """``git config --global`` in a reference is honest (its footprint then asks for
    ~/.gitconfig); a pytest configuration above the tests is tampering whoever asks."""
    upper = tmp_path / "upper"
    put(upper, "/root/.gitconfig", "[user]\n\tname = ref\n")
    put(upper, "/conftest.py", "x = 1\n")
    review = _review(lower, upper)
    assert not {"/root/.gitconfig", "/conftest.py"} & set(_carried(review))
    assert [s.split(":")[0] for s in review.standins] == ["/conftest.py"]


@pytest.mark.parametrize(("path", "image_file"), [
    ("/usr/x86_64-linux-gnu/bin/as", "/usr/bin/as"),  # gcc runs its target's as first
    ("/usr/x86_64-linux-gnu/bin/ld", "/usr/bin/ld"),
    ("/usr/lib/x86_64-linux-gnu/12/crt1.o", "/usr/lib/x86_64-linux-gnu/crt1.o"),
    ("/usr/x86_64-linux-gnu/lib/libc.so", "/usr/lib/x86_64-linux-gnu/libc.so"),
    ("/usr/x86_64-linux-gnu/include/stdio.h", "/usr/include/stdio.h"),
])
def test_a_created_file_with_the_name_of_an_image_tool_in_a_system_tree_is_left_out(
        lower: Path, tmp_path: Path, path: str, image_file: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The third cold attack: gcc searches its target directory (/usr/<triplet>/bin, lib,
    include) and version directory before the image's, and no list names them all. A
    created file there with the name of an image executable, object, library or header
    is left out; its twin with a name of its own is carried."""
    put(lower, image_file, "x", mode=0o755)
    upper = tmp_path / "upper"
    put(upper, path, "#!/bin/sh\nexit 0\n", mode=0o755)
    put(upper, "/usr/lib/shopd/bin/shopd", "#!/bin/sh\n", mode=0o755)  # a name of its own
    put(upper, "/usr/share/doc/shopd/copyright", "MIT\n")
    review = _review(lower, upper)
    assert path not in _carried(review)
    summary = review.left_out_summary() or ""
    assert f"{path} (has the" in summary and image_file in summary, summary
    assert {"/usr/lib/shopd/bin/shopd", "/usr/share/doc/shopd/copyright"} <= set(
        _carried(review))
    monkeypatch.setattr(integrity, "stands_in", lambda *a, **k: None)
    assert path in _carried(_review(lower, upper))


@pytest.mark.parametrize("path", ["/app/project/.gitattributes", "/app/.npmrc",
                                  "/app/.bashrc", "/app/.config/git/config",
                                  "/app/nss/libnss_demo.so.2", "/app/conf/nsswitch.conf"])
def test_project_files_in_the_workdir_with_tool_config_names_are_carried(
        lower: Path, tmp_path: Path, path: str) -> None:
    """The third cold attack's honest zero: a CRLF fix rewrote /app/project/.gitattributes
    and scored 0 as a finding. A tool reads such names unasked from a home (or an NSS
    module from where the loader looks), not from a project directory."""
    put(lower, "/app/project/.gitattributes", "* text=auto\r\n")
    upper = tmp_path / "upper"
    put(upper, path, "passwd: files demo\n")
    review = _review(lower, upper)
    assert review.all_findings() == [] and path in _carried(review)


def test_a_new_user_may_join_the_images_groups(lower: Path, tmp_path: Path) -> None:
    """``useradd alice; usermod -aG sudo alice``: the image's sudo line keeps its own
    fields and members, with alice appended; an image user added to a group, or a changed
    group password, stays out."""
    put(lower, "/etc/group", "root:x:0:\nsudo:x:27:bob\nadm:x:4:\n")
    upper = tmp_path / "upper"
    put(upper, "/etc/passwd", PASSWD + "alice:x:1000:1000::/home/alice:/bin/bash\n")
    put(upper, "/etc/group", "root:x:0:\nsudo:x:27:bob,alice\nadm:x:4:daemon\n"
                             "alice:x:1000:\n")
    review = _review(lower, upper)
    assert (upper / "etc/group").read_text() == ("root:x:0:\nsudo:x:27:bob,alice\n"
                                                  "adm:x:4:\nalice:x:1000:\n")
    assert "1 change(s) to the image's own entries" in (review.left_out_summary() or "")


def test_a_new_group_or_user_that_takes_an_image_id_stays_out(
        lower: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 15: ``datax:x:1600:svc`` (a new name, the image group ``data``'s gid) makes the
    image user ``svc`` a member of ``data`` for every ``initgroups``, where the task asked
    for a permission fix; ``toor:x:0:0`` is a second name for root. Both stay out, said;
    an honest ``groupadd``/``useradd`` (ids of their own) is merged. The control: the id
    check patched out, the stolen gid reaches B."""
    from termgrade.scoring.review import accounts

    put(lower, "/etc/group", "root:x:0:\ndata:x:1600:\nsvc:x:1001:\n")
    upper = tmp_path / "upper"
    put(upper, "/etc/group", "root:x:0:\ndata:x:1600:\nsvc:x:1001:\n"
                             "datax:x:1600:svc\nauditors:x:1700:svc\n"
                             "datay:x:01600:svc\ndataz:x: 1600:svc\n")  # round 16
    put(upper, "/etc/passwd", PASSWD + "toor:x:0:0::/root:/bin/bash\n"
                              "alice:x:1000:1000::/home/alice:/bin/bash\n")
    review = _review(lower, upper)
    assert (upper / "etc/group").read_text() == ("root:x:0:\ndata:x:1600:\nsvc:x:1001:\n"
                                                  "auditors:x:1700:svc\n")
    assert (upper / "etc/passwd").read_text() == PASSWD + (
        "alice:x:1000:1000::/home/alice:/bin/bash\n")
    summary = review.left_out_summary() or ""
    assert "new entry `datax` left out: its id 1600 is the image's `data`'s" in summary
    assert "new entry `toor` left out: its id 0 is the image's `root`'s" in summary
    assert "new entry `datay` left out: its id 01600 is the image's `data`'s" in summary
    assert "new entry `dataz` left out: its id ' 1600' is not a plain decimal" in summary
    monkeypatch.setattr(accounts, "_image_ids", lambda *a: {})  # the control
    put(upper, "/etc/group", "root:x:0:\ndata:x:1600:\nsvc:x:1001:\ndatax:x:1600:svc\n")
    _review(lower, upper)
    assert "datax:x:1600:svc" in (upper / "etc/group").read_text()


@pytest.mark.parametrize(("path", "image_file"), [
    ("/usr/local/go/pkg/tool/linux_amd64/link", "/usr/bin/link"),  # Go's own linker
    ("/usr/include/openssl/err.h", "/usr/include/err.h"),  # libssl-dev's header
    ("/usr/share/perl5/YAML/Dumper.pm", "/usr/share/perl5/Data/Dumper.pm"),
    ("/usr/lib/python3.12/pdb.py", "/usr/lib/python3.11/pdb.py"),
])
def test_honest_installs_that_share_a_base_name_with_an_image_file_are_carried(
        lower: Path, tmp_path: Path, path: str, image_file: str) -> None:
    """The fourth cold attack's honest zeros of a by-name rule: a Go tarball, apt's
    libssl-dev, libyaml-perl, python3.12. Judged by where a tool looks for that kind of
    file, none stands in for anything."""
    put(lower, image_file, "x", mode=0o755)
    upper = tmp_path / "upper"
    put(upper, path, "x", mode=0o755)
    review = _review(lower, upper)
    assert path in _carried(review), review.left_out_summary()


def test_a_whole_toolchain_the_image_lacks_is_the_agents_work(lower: Path,
                                                              tmp_path: Path) -> None:
    """``apt install build-essential`` on an image without gcc: its tree is carried (the
    tests then run the agent's compiler by design); the same files beside the image's own
    gcc are stand-ins."""
    upper = tmp_path / "upper"
    put(upper, "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "x", mode=0o755)
    assert "/usr/lib/gcc/x86_64-linux-gnu/12/cc1" in _carried(_review(lower, upper))
    put(lower, "/usr/lib/gcc", None)
    assert "/usr/lib/gcc/x86_64-linux-gnu/12/cc1" not in _carried(_review(lower, upper))


@pytest.mark.parametrize(("link", "target", "planted"), [
    ("/usr/x86_64-linux-gnu/bin/as", "/srv/as", "/srv/as"),  # a file link
    ("/usr/x86_64-linux-gnu", "/srv/tc", "/srv/tc/bin/as"),  # a directory link
    ("/usr/local/share/perl/5.36.0", "/srv/p", "/srv/p/strict.pm"),
])
def test_a_link_is_judged_by_what_it_shows_where_it_lies(
        lower: Path, tmp_path: Path, link: str, target: str, planted: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fourth cold attack: the stand-in rules judged an entry by its own path, so a
    symlink sent the real file somewhere plain (/srv) while a tool found it through the
    link. The link is judged by what it shows at its path; its twin, a link to a
    harmless tree, is carried."""
    put(lower, "/usr/bin/as", "x", mode=0o755)
    put(lower, "/usr/share/perl/5.36/strict.pm")
    upper = tmp_path / "upper"
    put(upper, planted, "#!/bin/sh\nexit 0\n", mode=0o755)
    (upper / link.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, upper / link.lstrip("/"))
    put(upper, "/srv/docs/readme.txt")
    os.symlink("/srv/docs", upper / "usr/x-docs")
    review = _review(lower, upper)
    assert link not in _carried(review)
    assert f"{link} (" in (review.left_out_summary() or "")
    assert "/usr/x-docs" in _carried(review)
    if target != planted:  # a directory link: only the judgement through it catches it
        assert "through this link" in (review.left_out_summary() or "")
        monkeypatch.setattr(carried_links, "_through_link", lambda *a, **k: None)
        assert link in _carried(_review(lower, upper))


@pytest.mark.parametrize("path", ["/node_modules/js-yaml/index.js",
                                  "/root/.node_modules/js-yaml/index.js"])
def test_node_modules_a_require_in_the_tests_would_find_are_left_out(
        lower: Path, tmp_path: Path, path: str) -> None:
    put(lower, "/root", None)
    upper = tmp_path / "upper"
    put(upper, path, "module.exports = {load: () => ({ok: true})}\n")
    review = _review(lower, upper)
    assert not [p for p in _carried(review) if "node_modules" in p]
    assert "Node" in (review.left_out_summary() or "")
