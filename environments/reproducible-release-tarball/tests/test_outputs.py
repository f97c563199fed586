import hashlib
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

TOOL = "/app/mkrelease"
EPOCH = "1700000000"


def build(src, out, epoch=EPOCH, env_extra=None):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = epoch
    env.update(env_extra or {})
    return subprocess.run([TOOL, str(src), str(out)], capture_output=True, text=True,
                          timeout=60, env=env)


def members(path):
    with tarfile.open(path, "r:gz") as tar:
        return tar.getmembers()


def names(path):
    return [m.name.rstrip("/") for m in members(path)]


def file_content(path, name):
    with tarfile.open(path, "r:gz") as tar:
        return tar.extractfile(name).read()


def put(root, rel, data="x\n", mode=0o644):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(data)
    p.chmod(mode)
    return p


def project(tmp_path, name="proj", order=None):
    src = tmp_path / name
    src.mkdir()
    files = [
        ("README.md", "# proj\n", 0o644), ("LICENSE", "MIT\n", 0o600), ("run.sh", "#!/bin/sh\n", 0o700),
        ("lib/core.py", "x = 1\n", 0o664), ("lib/util.py", "y = 2\n", 0o640),
        ("bin/tool", "#!/bin/sh\necho t\n", 0o751), ("a-b", "dash\n", 0o644),
        ("a.c", "dot\n", 0o644), ("a/x", "in a\n", 0o644), ("B", "upper\n", 0o644),
        ("caf\u00e9.txt", "unicode\n", 0o644),
    ]
    for rel, data, mode in (reversed(files) if order == "reverse" else files):
        put(src, rel, data, mode)
    (src / "empty").mkdir()
    (src / "lib" / "link.py").symlink_to("core.py")
    (src / ".git").mkdir()
    put(src, ".git/config", "[core]\n")
    return src


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_members_and_order(tmp_path):
    src = project(tmp_path)
    out = tmp_path / "out" / "proj-1.0.tar.gz"
    res = build(src, out)
    assert res.returncode == 0, res.stderr
    assert names(out) == [
        "proj-1.0", "proj-1.0/B", "proj-1.0/LICENSE", "proj-1.0/README.md", "proj-1.0/a",
        "proj-1.0/a/x", "proj-1.0/a-b", "proj-1.0/a.c", "proj-1.0/bin", "proj-1.0/bin/tool",
        "proj-1.0/caf\u00e9.txt", "proj-1.0/empty", "proj-1.0/lib", "proj-1.0/lib/core.py",
        "proj-1.0/lib/link.py", "proj-1.0/lib/util.py", "proj-1.0/run.sh",
    ]


def test_member_metadata_normalised(tmp_path):
    src = project(tmp_path)
    out = tmp_path / "p.tar.gz"
    assert build(src, out).returncode == 0
    for m in members(out):
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (1700000000, 0, 0, "root", "root"), m.name


def test_modes_normalised(tmp_path):
    src = project(tmp_path)
    out = tmp_path / "p.tar.gz"
    assert build(src, out).returncode == 0
    modes = {m.name.rstrip("/"): m.mode for m in members(out) if not m.issym()}
    assert modes["p"] == 0o755
    assert modes["p/LICENSE"] == 0o644
    assert modes["p/run.sh"] == 0o755
    assert modes["p/bin/tool"] == 0o755
    assert modes["p/lib/core.py"] == 0o644
    assert modes["p/lib/util.py"] == 0o644
    assert modes["p/empty"] == 0o755


def test_types_contents_and_symlinks(tmp_path):
    src = project(tmp_path)
    out = tmp_path / "p.tar.gz"
    assert build(src, out).returncode == 0
    by_name = {m.name.rstrip("/"): m for m in members(out)}
    assert by_name["p/empty"].isdir() and by_name["p/lib"].isdir()
    assert by_name["p/lib/link.py"].issym() and by_name["p/lib/link.py"].linkname == "core.py"
    assert file_content(out, "p/caf\u00e9.txt") == b"unicode\n"
    assert file_content(out, "p/bin/tool") == b"#!/bin/sh\necho t\n"


def test_git_dir_excluded(tmp_path):
    src = project(tmp_path)
    put(src, "sub/.git/HEAD", "ref\n")
    put(src, "sub/.gitignore", "*.o\n")
    out = tmp_path / "p.tar.gz"
    assert build(src, out).returncode == 0
    got = names(out)
    assert not any(".git/" in n or n.endswith("/.git") for n in got)
    assert "p/sub/.gitignore" in got


def test_hard_links_stored_as_files(tmp_path):
    src = project(tmp_path)
    os.link(src / "README.md", src / "README.copy")
    out = tmp_path / "p.tar.gz"
    assert build(src, out).returncode == 0
    by_name = {m.name: m for m in members(out)}
    assert by_name["p/README.copy"].isreg() and by_name["p/README.md"].isreg()
    assert file_content(out, "p/README.copy") == b"# proj\n"


def test_gzip_header(tmp_path):
    src = project(tmp_path)
    out = tmp_path / "p.tar.gz"
    assert build(src, out).returncode == 0
    head = out.read_bytes()[:10]
    assert head[:3] == b"\x1f\x8b\x08"
    assert head[3] & 0x08 == 0, "gzip header stores a file name"
    assert head[4:8] == b"\x00\x00\x00\x00", "gzip header stores a timestamp"


def test_checksum_file(tmp_path):
    src = project(tmp_path)
    out = tmp_path / "dist" / "p-2.tar.gz"
    assert build(src, out).returncode == 0
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert (tmp_path / "dist" / "p-2.tar.gz.sha256").read_text() == f"{digest}  p-2.tar.gz\n"


def test_rebuild_is_identical(tmp_path):
    src = project(tmp_path)
    a, b = tmp_path / "1" / "p.tar.gz", tmp_path / "2" / "p.tar.gz"
    assert build(src, a).returncode == 0
    assert build(src, b).returncode == 0
    assert a.read_bytes() == b.read_bytes()


def test_identical_despite_times_owners_and_creation_order(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    first = project(tmp_path / "x")
    second = project(tmp_path / "y", order="reverse")
    for p in [second, *second.rglob("*")]:
        if not p.is_symlink():
            os.utime(p, (1234567890, 987654321))
            os.chown(p, 4321, 8765)
    (second / "lib" / "core.py").chmod(0o666)
    (second / "run.sh").chmod(0o755)
    a, b = tmp_path / "a" / "proj.tar.gz", tmp_path / "b" / "proj.tar.gz"
    assert build(first, a).returncode == 0
    assert build(second, b, env_extra={"TZ": "Asia/Tokyo"}).returncode == 0
    assert a.read_bytes() == b.read_bytes()


def test_epoch_changes_only_times(tmp_path):
    src = project(tmp_path)
    a, b = tmp_path / "1" / "p.tar.gz", tmp_path / "2" / "p.tar.gz"
    assert build(src, a, epoch="1700000000").returncode == 0
    assert build(src, b, epoch="86400").returncode == 0
    assert a.read_bytes() != b.read_bytes()
    assert {m.mtime for m in members(b)} == {86400}
    assert names(a) == names(b)


def test_releaseignore_rules(tmp_path):
    src = tmp_path / "app"
    src.mkdir()
    for rel in ["main.py", "mod.pyc", "pkg/a.pyc", "pkg/a.py", "build/out.o", "tools/build",
                "dist/x.tgz", "docs/dist/keep.md", "docs/draft-1.md", "docs/final.md",
                "logs/a.log", "keep.log", "pkg/keep.log", "cache/keep.txt", "cache/junk",
                "notes/todo.txt", "x/notes/todo.txt", "q1.csv", "q10.csv"]:
        put(src, rel)
    put(src, ".releaseignore", "\n".join([
        "# comment", "", "   *.pyc   ", "build/", "/dist", "docs/draft-*", "*.log",
        "!keep.log", "cache/", "!cache/keep.txt", "/notes/", "q?.csv", ""]))
    out = tmp_path / "app.tar.gz"
    res = build(src, out)
    assert res.returncode == 0, res.stderr
    assert names(out) == [
        "app", "app/docs", "app/docs/dist", "app/docs/dist/keep.md", "app/docs/final.md",
        "app/keep.log", "app/logs", "app/main.py", "app/pkg", "app/pkg/a.py", "app/pkg/keep.log",
        "app/q10.csv", "app/tools", "app/tools/build", "app/x", "app/x/notes", "app/x/notes/todo.txt",
    ]


def test_character_class_and_negation_order(tmp_path):
    src = tmp_path / "c"
    src.mkdir()
    for rel in ["data1.txt", "data2.txt", "data3.txt", "datax.txt", "img/a.png", "img/b.png"]:
        put(src, rel)
    put(src, ".releaseignore", "data[12].txt\n!data1.txt\ndata1.txt\nimg/*.png\n!img/b.png\n")
    out = tmp_path / "c.tar.gz"
    assert build(src, out).returncode == 0
    assert names(out) == ["c", "c/data3.txt", "c/datax.txt", "c/img", "c/img/b.png"]


@pytest.mark.parametrize("case", ["no-epoch", "bad-epoch", "negative-epoch", "missing-src",
                                  "bad-suffix", "no-args"])
def test_errors_exit_2_without_output(tmp_path, case):
    src = project(tmp_path)
    out = tmp_path / "out" / "p.tar.gz"
    if case == "no-epoch":
        res = build(src, out, epoch=None)
    elif case == "bad-epoch":
        res = build(src, out, epoch="yesterday")
    elif case == "negative-epoch":
        res = build(src, out, epoch="-5")
    elif case == "missing-src":
        res = build(tmp_path / "nope", out)
    elif case == "bad-suffix":
        out = tmp_path / "out" / "p.zip"
        res = build(src, out)
    else:
        res = subprocess.run([TOOL], capture_output=True, text=True, timeout=30,
                             env={"SOURCE_DATE_EPOCH": EPOCH, "PATH": os.environ.get("PATH", "")})
    assert res.returncode == 2
    assert res.stderr.strip() != ""
    assert not out.exists()


SAMPLE = [
    "widget-1.4.0", "widget-1.4.0/CHANGES.log", "widget-1.4.0/LICENSE", "widget-1.4.0/README.md",
    "widget-1.4.0/VERSION", "widget-1.4.0/data", "widget-1.4.0/docs", "widget-1.4.0/docs/dist",
    "widget-1.4.0/docs/dist/keep.md", "widget-1.4.0/docs/index.md", "widget-1.4.0/logs",
    "widget-1.4.0/scripts", "widget-1.4.0/scripts/build", "widget-1.4.0/scripts/run.sh",
    "widget-1.4.0/setup.cfg", "widget-1.4.0/widget", "widget-1.4.0/widget/__init__.py",
    "widget-1.4.0/widget/core.py", "widget-1.4.0/widget/version.txt",
]


def test_sample_release_built():
    out = Path("/app/dist/widget-1.4.0.tar.gz")
    assert names(out) == SAMPLE
    assert {m.mtime for m in members(out)} == {1714521600}
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert Path("/app/dist/widget-1.4.0.tar.gz.sha256").read_text() == f"{digest}  widget-1.4.0.tar.gz\n"


def test_sample_release_reproducible(tmp_path):
    copy = tmp_path / "elsewhere" / "widget"
    shutil.copytree("/app/src/widget", copy, symlinks=True)
    for p in copy.rglob("*"):
        if not p.is_symlink():
            os.utime(p, (1, 2))
    out = tmp_path / "widget-1.4.0.tar.gz"
    assert build(copy, out, epoch="1714521600").returncode == 0
    assert out.read_bytes() == Path("/app/dist/widget-1.4.0.tar.gz").read_bytes()
