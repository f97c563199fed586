import hashlib
import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/checkmanifest"
RELEASE = Path("/app/release")


def run(*args, cwd=None):
    return subprocess.run([TOOL, *args], capture_output=True, timeout=60, cwd=cwd)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def tree(tmp_path, files):
    root = tmp_path / "tree"
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    root.mkdir(exist_ok=True)
    return root


def check(root, manifest_text, *opts, name="SHA256SUMS"):
    (root / name).write_bytes(manifest_text.encode("utf-8"))
    out = run(*opts, str(root / name))
    return out.returncode, out.stdout.decode("utf-8").splitlines()


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_release_report():
    out = run(str(RELEASE / "SHA256SUMS"))
    assert out.returncode == 1
    assert out.stdout.decode().splitlines() == [
        "OK bin/mytool",
        "OK lib/libmytool.so.2",
        "FAILED docs/CHANGELOG.md",
        "OK docs/sample config.ini",
        "OK docs/back\\\\slash.txt",
        "OK LICENSE",
        "MISSING docs/INSTALL.md",
        "ok=5 failed=1 missing=1 malformed=0 extra=0",
    ]


def test_release_strict_report():
    out = run("--strict", "SHA256SUMS", cwd=RELEASE)
    assert out.returncode == 1
    lines = out.stdout.decode().splitlines()
    assert lines[-2:] == ["EXTRA bin/mytool.debug", "ok=5 failed=1 missing=1 malformed=0 extra=1"]


def test_all_ok_exits_0(tmp_path):
    root = tree(tmp_path, {"a.txt": b"alpha\n", "sub/b.bin": b"\x00\x01"})
    code, lines = check(root, f"{sha(b'alpha' + bytes([10]))}  a.txt\n{sha(bytes([0, 1]))}  sub/b.bin\n")
    assert code == 0
    assert lines == ["OK a.txt", "OK sub/b.bin", "ok=2 failed=0 missing=0 malformed=0 extra=0"]


def test_binary_mode_and_uppercase_hex(tmp_path):
    data = bytes([255]) * 100
    root = tree(tmp_path, {"img.raw": data})
    code, lines = check(root, sha(data).upper() + " *img.raw\n")
    assert code == 0
    assert lines[0] == "OK img.raw"


def test_failed_hash(tmp_path):
    root = tree(tmp_path, {"a.txt": b"changed"})
    code, lines = check(root, f"{sha(b'original')}  a.txt\n")
    assert code == 1
    assert lines == ["FAILED a.txt", "ok=0 failed=1 missing=0 malformed=0 extra=0"]


def test_missing_and_directory_entries(tmp_path):
    root = tree(tmp_path, {"dir/x": b"x"})
    code, lines = check(root, f"{sha(b'x')}  gone.txt\n{sha(b'x')}  dir\n{sha(b'x')}  dir/x\n")
    assert code == 1
    assert lines == ["MISSING gone.txt", "MISSING dir", "OK dir/x", "ok=1 failed=0 missing=2 malformed=0 extra=0"]


def test_symlink_to_file_is_followed(tmp_path):
    root = tree(tmp_path, {"real.txt": b"data"})
    os.symlink("real.txt", root / "link.txt")
    os.symlink("nowhere.txt", root / "dangling.txt")
    code, lines = check(root, f"{sha(b'data')}  link.txt\n{sha(b'data')}  dangling.txt\n")
    assert code == 1
    assert lines[:2] == ["OK link.txt", "MISSING dangling.txt"]


def test_escaped_file_names(tmp_path):
    root = tree(tmp_path, {"back\\slash.txt": b"1", "new\nline.txt": b"2"})
    manifest = f"\\{sha(b'1')}  back\\\\slash.txt\n\\{sha(b'2')}  new\\nline.txt\n"
    code, lines = check(root, manifest)
    assert code == 0
    assert lines == ["OK back\\\\slash.txt", "OK new\\nline.txt", "ok=2 failed=0 missing=0 malformed=0 extra=0"]


def test_spaces_in_names_are_significant(tmp_path):
    root = tree(tmp_path, {" lead.txt": b"L", "two  spaces.txt": b"S"})
    code, lines = check(root, f"{sha(b'L')}   lead.txt\n{sha(b'S')}  two  spaces.txt\n")
    assert code == 0
    assert lines[:2] == ["OK  lead.txt", "OK two  spaces.txt"]


def test_comments_blank_and_malformed_lines(tmp_path):
    root = tree(tmp_path, {"a": b"a"})
    manifest = "\n".join([
        "# comment",
        "",
        f"{sha(b'a')}  a",
        f"{sha(b'a')[:63]}  a",
        f"{sha(b'a')}\ta",
        f"{sha(b'a')} a",
        f"{sha(b'a')}  ",
        "garbage",
        f"{'g' * 64}  a",
    ]) + "\n"
    code, lines = check(root, manifest)
    assert code == 1
    assert lines == [
        "OK a", "MALFORMED 4", "MALFORMED 5", "MALFORMED 6", "MALFORMED 7", "MALFORMED 8", "MALFORMED 9",
        "ok=1 failed=0 missing=0 malformed=6 extra=0",
    ]


def test_paths_relative_to_manifest_directory(tmp_path):
    root = tree(tmp_path, {"pkg/data.txt": b"d"})
    (root / "pkg" / "SUMS").write_text(f"{sha(b'd')}  data.txt\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run(str(root / "pkg" / "SUMS"), cwd=elsewhere)
    assert out.returncode == 0
    assert out.stdout.decode().splitlines()[0] == "OK data.txt"
    rel = run("../tree/pkg/SUMS", cwd=elsewhere)
    assert rel.returncode == 0


def test_strict_extras(tmp_path):
    root = tree(tmp_path, {"a.txt": b"a", "B.txt": b"b", "z/deep/c.txt": b"c", "m.txt": b"m", "_x": b"x"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hidden.txt").write_bytes(b"h")
    os.symlink(outside, root / "linkdir")
    code, lines = check(root, f"{sha(b'a')}  ./a.txt\n{sha(b'm')}  m.txt\n", "--strict")
    assert code == 1
    assert lines == [
        "OK ./a.txt",
        "OK m.txt",
        "EXTRA B.txt",
        "EXTRA _x",
        "EXTRA z/deep/c.txt",
        "ok=2 failed=0 missing=0 malformed=0 extra=3",
    ]


def test_strict_clean_tree_exits_0(tmp_path):
    root = tree(tmp_path, {"only.txt": b"o"})
    code, lines = check(root, f"{sha(b'o')}  only.txt\n", "--strict", name="MANIFEST.sha256")
    assert code == 0
    assert lines == ["OK only.txt", "ok=1 failed=0 missing=0 malformed=0 extra=0"]


def test_empty_manifest(tmp_path):
    root = tree(tmp_path, {})
    code, lines = check(root, "")
    assert code == 0
    assert lines == ["ok=0 failed=0 missing=0 malformed=0 extra=0"]


def test_large_file(tmp_path):
    data = bytes(range(256)) * 4096 * 24
    root = tree(tmp_path, {"big.iso": data})
    code, lines = check(root, f"{sha(data)} *big.iso\n")
    assert code == 0 and lines[0] == "OK big.iso"


@pytest.mark.parametrize("args", [["/nonexistent/SHA256SUMS"], [], ["a", "b"]], ids=["missing", "none", "two"])
def test_usage_errors_exit_2(args):
    out = run(*args)
    assert out.returncode == 2
    assert out.stdout == b""


def test_release_not_modified():
    before = {p: p.read_bytes() for p in RELEASE.rglob("*") if p.is_file()}
    run("--strict", str(RELEASE / "SHA256SUMS"))
    assert {p: p.read_bytes() for p in RELEASE.rglob("*") if p.is_file()} == before
