import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/tidy-names"
INBOX = Path("/app/inbox")


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=30)


def make(tmp_path, names):
    d = tmp_path / "box"
    d.mkdir()
    for i, name in enumerate(names):
        (d / name).write_text(f"content {i}\n")
    return d


def listing(d):
    return sorted(os.listdir(d))


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_basic_cleaning(tmp_path):
    d = make(tmp_path, ["My Scan (2).PDF"])
    out = run(str(d))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "My Scan (2).PDF -> my_scan_2.pdf\n"
    assert listing(d) == ["my_scan_2.pdf"]
    assert (d / "my_scan_2.pdf").read_text() == "content 0\n"


def test_unicode_runs_become_one_underscore(tmp_path):
    d = make(tmp_path, ["Résumé final.docx", "naïve—idea.md"])
    out = run(str(d))
    assert out.returncode == 0, out.stderr
    assert listing(d) == ["na_ve_idea.md", "r_sum_final.docx"]


def test_leading_dash_name_is_handled_safely(tmp_path):
    d = make(tmp_path, ["-Draft  Notes.TXT"])
    out = run(str(d))
    assert out.returncode == 0, out.stderr
    assert listing(d) == ["-draft_notes.txt"]
    assert out.stdout == "-Draft  Notes.TXT -> -draft_notes.txt\n"


def test_no_extension_and_trailing_dot(tmp_path):
    d = make(tmp_path, ["README", "Weird Name.", "archive.tar.GZ"])
    run(str(d))
    assert listing(d) == ["archive.tar.gz", "readme", "weird_name."]


def test_extension_is_stripped_of_symbols(tmp_path):
    d = make(tmp_path, ["photo.J P*G", "data.!!!"])
    run(str(d))
    assert listing(d) == ["data", "photo.jpg"]


def test_empty_stem_becomes_unnamed(tmp_path):
    d = make(tmp_path, ["(((.txt", "@@@"])
    run(str(d))
    assert listing(d) == ["unnamed", "unnamed.txt"]


def test_glob_characters_are_literal(tmp_path):
    d = make(tmp_path, ["*.TXT", "[a].txt", "b"])
    out = run(str(d))
    assert out.returncode == 0, out.stderr
    assert listing(d) == ["a.txt", "b", "unnamed.txt"]


def test_collision_with_existing_file_is_skipped(tmp_path):
    d = make(tmp_path, ["IMG_1.JPG", "img_1.jpg"])
    out = run(str(d))
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.strip().splitlines() == ["skip: IMG_1.JPG -> img_1.jpg (exists)"]
    assert listing(d) == ["IMG_1.JPG", "img_1.jpg"]
    assert (d / "img_1.jpg").read_text() == "content 1\n"


def test_collision_between_two_renames_uses_byte_order(tmp_path):
    d = make(tmp_path, ["b  c.txt", "B C.txt", "b_c.TXT"])
    out = run(str(d))
    assert out.returncode == 1
    assert out.stdout == "B C.txt -> b_c.txt\n"
    assert out.stderr.strip().splitlines() == [
        "skip: b  c.txt -> b_c.txt (exists)",
        "skip: b_c.TXT -> b_c.txt (exists)",
    ]
    assert (d / "b_c.txt").read_text() == "content 1\n"
    assert listing(d) == ["b  c.txt", "b_c.TXT", "b_c.txt"]


def test_dry_run_changes_nothing_but_reports_everything(tmp_path):
    names = ["Alpha Beta.TXT", "alpha_beta.txt", "Gamma.JPG"]
    d = make(tmp_path, names)
    out = run("-n", str(d))
    assert out.returncode == 1
    assert out.stdout == "Gamma.JPG -> gamma.jpg\n"
    assert out.stderr.strip().splitlines() == ["skip: Alpha Beta.TXT -> alpha_beta.txt (exists)"]
    assert listing(d) == sorted(names)


def test_dry_run_sees_its_own_planned_renames(tmp_path):
    d = make(tmp_path, ["X Y.txt", "x y.txt"])
    out = run("-n", str(d))
    assert out.returncode == 1
    assert out.stdout == "X Y.txt -> x_y.txt\n"
    assert "skip: x y.txt -> x_y.txt (exists)" in out.stderr
    assert listing(d) == ["X Y.txt", "x y.txt"]


def test_dirs_symlinks_hidden_and_nested_left_alone(tmp_path):
    d = make(tmp_path, ["Real File.TXT"])
    (d / "Sub Dir").mkdir()
    (d / "Sub Dir" / "Inner File.TXT").write_text("x")
    (d / ".Hidden File.TXT").write_text("h")
    (d / "Link Name").symlink_to("Real File.TXT")
    out = run(str(d))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Real File.TXT -> real_file.txt\n"
    assert listing(d) == [".Hidden File.TXT", "Link Name", "Sub Dir", "real_file.txt"]
    assert os.listdir(d / "Sub Dir") == ["Inner File.TXT"]
    assert os.path.islink(d / "Link Name")


def test_already_clean_names_print_nothing(tmp_path):
    d = make(tmp_path, ["report-2023.csv", "a_b.c.txt"])
    out = run(str(d))
    assert out.returncode == 0
    assert out.stdout == "" and out.stderr == ""
    assert listing(d) == ["a_b.c.txt", "report-2023.csv"]


def test_empty_directory(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    out = run(str(d))
    assert out.returncode == 0
    assert out.stdout == ""


def test_contents_preserved_for_many_files(tmp_path):
    names = [f"Track {i:03d} - Live!.MP3" for i in range(200)]
    d = make(tmp_path, names)
    out = run(str(d))
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 200
    for i in range(200):
        assert (d / f"track_{i:03d}_-_live.mp3").read_text() == f"content {i}\n"


@pytest.mark.parametrize(
    "args",
    [[], ["/nonexistent/dir"], ["-x", "/tmp"], ["/tmp", "/tmp"]],
    ids=["no-dir", "missing-dir", "unknown-option", "extra-arg"],
)
def test_usage_errors_exit_2(args):
    out = run(*args)
    assert out.returncode == 2
    assert out.stderr.strip() != ""


def test_dir_that_is_a_file_exits_2(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    out = run(str(f))
    assert out.returncode == 2
    assert f.read_text() == "x"


def test_sample_inbox_was_tidied():
    assert listing(INBOX) == [
        ".Hidden File.TXT",
        "IMG_2041.JPG",
        "Link To Budget",
        "budget_final_v3.xlsx",
        "caf_menu.pdf",
        "img_2041.jpg",
        "meeting_notes.txt",
        "old-scans",
        "report-2023.csv",
        "scan_2024-03-01_1.pdf",
        "scan_2024-03-01_2.pdf",
        "todo",
    ]
    assert (INBOX / "img_2041.jpg").read_text() == "photo copy\n"
    assert (INBOX / "scan_2024-03-01_2.pdf").read_text() == "scan two\n"
    assert os.listdir(INBOX / "old-scans") == ["Old Scan.PDF"]
