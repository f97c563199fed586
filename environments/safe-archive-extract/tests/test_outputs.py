import bz2
import gzip
import io
import lzma
import os
import subprocess
import tarfile
import zipfile

import pytest

TOOL = "/app/safe-extract"


def run(*args):
    return subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=60)


def f(name, data=b"x\n", mode=0o644, mtime=1700000000):
    return ("file", name, data, mode, mtime)


def d(name, mode=0o755):
    return ("dir", name, None, mode, 1700000000)


def sym(name, target):
    return ("sym", name, target, 0o777, 1700000000)


def hard(name, target):
    return ("hard", name, target, 0o644, 1700000000)


def tar_bytes(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for kind, name, payload, mode, mtime in entries:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime = mode, mtime
            if kind == "file":
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                         "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE}[kind]
            if kind in ("sym", "hard"):
                info.linkname = payload
            tar.addfile(info)
    return buf.getvalue()


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def setup(tmp_path, entries, name="in.tar"):
    (tmp_path / "outside").mkdir()
    return write(tmp_path, name, tar_bytes(entries)), tmp_path / "dest"


def rejected_lines(out):
    return [line for line in out.stderr.splitlines() if line.startswith("rejected: ")]


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_plain_tar_extracts_everything(tmp_path):
    arc, dest = setup(tmp_path, [d("proj/"), f("proj/a.txt", b"alpha\n"),
                                 f("proj/sub/b.txt", b"beta\n"), sym("proj/link", "a.txt")])
    out = run(arc, dest)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["proj", "proj/a.txt", "proj/sub/b.txt", "proj/link"]
    assert (dest / "proj/a.txt").read_bytes() == b"alpha\n"
    assert (dest / "proj/sub/b.txt").read_bytes() == b"beta\n"
    assert os.readlink(dest / "proj/link") == "a.txt"


def compress(kind, data):
    if kind == "gzip":
        return gzip.compress(data)
    if kind == "bzip2":
        return bz2.compress(data)
    if kind == "xz":
        return lzma.compress(data)
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout


@pytest.mark.parametrize("kind, name", [("gzip", "upload.zip"), ("bzip2", "upload.tar"),
                                        ("xz", "upload.gz"), ("zstd", "upload.bin")])
def test_format_detected_by_content(tmp_path, kind, name):
    arc = write(tmp_path, name, compress(kind, tar_bytes([f("doc.txt", kind.encode())])))
    dest = tmp_path / "dest"
    out = run(arc, dest)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "doc.txt\n"
    assert (dest / "doc.txt").read_bytes() == kind.encode()


def zip_bytes(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6))
            if mode is None:  # made on MS-DOS: no Unix permission bits at all
                info.create_system = 0
                info.external_attr = 0x20
            else:
                info.create_system = 3
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return buf.getvalue()


def test_zip_archive_with_modes(tmp_path):
    arc = write(tmp_path, "pkg.dat", zip_bytes([("bin/run.sh", b"#!/bin/sh\n", 0o100755),
                                                ("README", b"read me\n", None)]))
    dest = tmp_path / "dest"
    out = run(arc, dest)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["bin/run.sh", "README"]
    assert (dest / "bin/run.sh").stat().st_mode & 0o7777 == 0o755
    assert (dest / "README").stat().st_mode & 0o7777 == 0o644
    assert (dest / "README").read_bytes() == b"read me\n"


def test_zip_slip_rejected(tmp_path):
    (tmp_path / "outside").mkdir()
    arc = write(tmp_path, "evil.zip", zip_bytes([("ok.txt", b"ok", None),
                                                 ("../outside/evil.txt", b"pwned", None)]))
    out = run(arc, tmp_path / "dest")
    assert out.returncode == 3
    assert rejected_lines(out) == ["rejected: ../outside/evil.txt (parent reference)"]
    assert os.listdir(tmp_path / "outside") == []
    assert (tmp_path / "dest/ok.txt").read_bytes() == b"ok"


def test_patterns_select_members_and_star_crosses_slash(tmp_path):
    arc, dest = setup(tmp_path, [f("a.txt"), f("d/b.txt"), f("d/c.log"), f("e.md"), f("e.mdx")])
    out = run(arc, dest, "*.txt", "e.?d")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["a.txt", "d/b.txt", "e.md"]
    assert sorted(os.listdir(dest)) == ["a.txt", "d", "e.md"]
    assert os.listdir(dest / "d") == ["b.txt"]


def test_unselected_unsafe_members_are_ignored(tmp_path):
    arc, dest = setup(tmp_path, [f("../outside/evil.txt"), f("ok.txt"), sym("bad", "/etc")])
    out = run(arc, dest, "ok*")
    assert out.returncode == 0
    assert out.stderr == ""
    assert out.stdout == "ok.txt\n"


def test_absolute_path_rejected(tmp_path):
    target = tmp_path / "outside" / "abs.txt"
    arc, dest = setup(tmp_path, [f(str(target), b"pwned"), f("fine.txt")])
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == [f"rejected: {target} (absolute path)"]
    assert not target.exists()
    assert out.stdout == "fine.txt\n"


@pytest.mark.parametrize("name", ["../outside/evil.txt", "a/../../outside/evil.txt", "a/../b.txt"])
def test_parent_references_rejected(tmp_path, name):
    arc, dest = setup(tmp_path, [f(name, b"pwned"), f("keep.txt")])
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == [f"rejected: {name} (parent reference)"]
    assert os.listdir(tmp_path / "outside") == []
    assert sorted(os.listdir(dest)) == ["keep.txt"]


def test_special_files_rejected(tmp_path):
    arc, dest = setup(tmp_path, [("fifo", "pipe", None, 0o644, 0), ("chr", "dev/null2", None, 0o666, 0),
                                 f("plain")])
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == ["rejected: pipe (special file)", "rejected: dev/null2 (special file)"]
    assert sorted(os.listdir(dest)) == ["plain"]


def test_symlink_targets_checked(tmp_path):
    arc, dest = setup(tmp_path, [f("a.txt", b"A"), sym("abs", "/etc/passwd"),
                                 sym("docs/up", "../../outside"), sym("docs/ok", "../a.txt"),
                                 sym("self", ".")])
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == ["rejected: abs (unsafe link)", "rejected: docs/up (unsafe link)"]
    assert out.stdout.splitlines() == ["a.txt", "docs/ok", "self"]
    assert os.readlink(dest / "docs/ok") == "../a.txt"
    assert (dest / "docs/ok").read_bytes() == b"A"
    assert not os.path.lexists(dest / "abs")


def test_existing_symlink_in_dest_is_not_followed(tmp_path):
    arc, dest = setup(tmp_path, [f("out/file.txt", b"pwned"), f("other.txt")])
    dest.mkdir()
    (dest / "out").symlink_to(tmp_path / "outside")
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == ["rejected: out/file.txt (unsafe path)"]
    assert os.listdir(tmp_path / "outside") == []
    assert out.stdout == "other.txt\n"


def test_member_through_extracted_symlink_rejected(tmp_path):
    arc, dest = setup(tmp_path, [d("sub/"), sym("alias", "sub"), f("alias/x.txt", b"sneaky")])
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == ["rejected: alias/x.txt (unsafe path)"]
    assert out.stdout.splitlines() == ["sub", "alias"]
    assert os.listdir(dest / "sub") == []


def test_member_ending_at_symlink_rejected(tmp_path):
    victim = tmp_path / "outside" / "victim.txt"
    arc, dest = setup(tmp_path, [f("target.txt", b"overwrite")])
    victim.write_text("original\n")
    dest.mkdir()
    (dest / "target.txt").symlink_to(victim)
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == ["rejected: target.txt (unsafe path)"]
    assert victim.read_text() == "original\n"
    assert os.path.islink(dest / "target.txt")


def test_hard_links(tmp_path):
    arc, dest = setup(tmp_path, [f("a.txt", b"shared", mode=0o640), hard("h1", "a.txt"),
                                 hard("h2", "/etc/passwd"), hard("h3", "missing.txt"),
                                 hard("h4", "../outside/x")])
    out = run(arc, dest)
    assert out.returncode == 3
    assert rejected_lines(out) == ["rejected: h2 (unsafe link)", "rejected: h3 (unsafe link)",
                                   "rejected: h4 (unsafe link)"]
    assert out.stdout.splitlines() == ["a.txt", "h1"]
    assert (dest / "h1").read_bytes() == b"shared"
    assert (dest / "h1").stat().st_mode & 0o7777 == 0o640


def test_modes_stripped_and_mtime_kept(tmp_path):
    arc, dest = setup(tmp_path, [f("suid", mode=0o4755, mtime=1600000000), f("priv", mode=0o640),
                                 f("sticky", mode=0o1777)])
    out = run(arc, dest)
    assert out.returncode == 0, out.stderr
    assert (dest / "suid").stat().st_mode & 0o7777 == 0o755
    assert (dest / "priv").stat().st_mode & 0o7777 == 0o640
    assert (dest / "sticky").stat().st_mode & 0o7777 == 0o777
    assert (dest / "suid").stat().st_mtime == 1600000000


def test_existing_file_replaced(tmp_path):
    arc, dest = setup(tmp_path, [f("conf.ini", b"new\n")])
    dest.mkdir()
    (dest / "conf.ini").write_bytes(b"old contents that are longer\n")
    out = run(arc, dest)
    assert out.returncode == 0, out.stderr
    assert (dest / "conf.ini").read_bytes() == b"new\n"


def test_list_mode_writes_nothing(tmp_path):
    entries = [d("top/"), f("top/a.txt"), f("../outside/evil"), sym("top/l", "a.txt"),
               f("top/l/x")]
    arc, dest = setup(tmp_path, entries)
    listed = run("-l", arc, dest)
    assert not dest.exists()
    real = run(arc, tmp_path / "real")
    assert listed.returncode == real.returncode == 3
    assert listed.stdout == real.stdout == "top\ntop/a.txt\ntop/l\n"
    assert listed.stderr == real.stderr
    assert rejected_lines(listed) == ["rejected: ../outside/evil (parent reference)",
                                      "rejected: top/l/x (unsafe path)"]


def test_dot_slash_names_normalised(tmp_path):
    arc, dest = setup(tmp_path, [d("./"), d("./x/"), f("./x/y.txt"), f("././z.txt")])
    out = run(arc, dest, "x*", "z.txt")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["x", "x/y.txt", "z.txt"]
    assert (dest / "x/y.txt").is_file()


@pytest.mark.parametrize("case", ["garbage", "missing", "no-args", "one-arg", "unknown-option",
                                  "dest-is-file", "damaged-gzip"])
def test_errors_exit_2(tmp_path, case):
    good = write(tmp_path, "good.tar", tar_bytes([f("a.txt")]))
    dest = tmp_path / "dest"
    if case == "garbage":
        args = [write(tmp_path, "junk.tar", b"this is not an archive at all\n" * 40), dest]
    elif case == "missing":
        args = [tmp_path / "nope.tar", dest]
    elif case == "no-args":
        args = []
    elif case == "one-arg":
        args = [good]
    elif case == "unknown-option":
        args = ["-z", good, dest]
    elif case == "dest-is-file":
        dest.write_text("file")
        args = [good, dest]
    else:
        args = [write(tmp_path, "cut.tgz", gzip.compress(tar_bytes([f("a.txt", b"y" * 5000)]))[:60]), dest]
    out = run(*args)
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert out.stdout == ""
    assert not (dest.is_dir() and os.listdir(dest))
