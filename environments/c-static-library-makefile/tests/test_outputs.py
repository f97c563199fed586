import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

SRC = Path("/app/strutil")
OBJECTS = ["case.o", "count.o", "reverse.o", "split.o", "trim.o"]


def make(tree, *args, check=True):
    res = subprocess.run(["make", "-C", str(tree), *args], capture_output=True, text=True, timeout=120)
    if check:
        assert res.returncode == 0, res.stdout + res.stderr
    return res


@pytest.fixture
def tree(tmp_path):
    dest = tmp_path / "strutil"
    shutil.copytree(SRC, dest, ignore=shutil.ignore_patterns("build"))
    return dest


@pytest.fixture
def built(tree):
    make(tree)
    return tree


def source_files(tree):
    return sorted(str(p.relative_to(tree)) for p in tree.rglob("*")
                  if p.is_file() and "build" not in p.relative_to(tree).parts)


def age_everything(tree):
    """Make every file old, build outputs newer than sources, so a later touch is visible."""
    now = time.time()
    for p in tree.rglob("*"):
        if p.is_file():
            t = now - 1000 if "build" in p.relative_to(tree).parts else now - 2000
            os.utime(p, (t, t))


def build_mtimes(tree):
    return {str(p.relative_to(tree)): p.stat().st_mtime for p in (tree / "build").rglob("*") if p.is_file()}


def find_object(tree, name):
    hits = [p for p in (tree / "build").rglob(name)]
    assert len(hits) == 1, f"expected one {name} under build/, found {hits}"
    return str(hits[0].relative_to(tree))


def strtool(binary, *args, stdin=""):
    return subprocess.run([str(binary), *args], input=stdin, capture_output=True, text=True, timeout=30)


def test_makefile_exists():
    assert (SRC / "Makefile").is_file()


def test_app_tree_is_built_and_up_to_date():
    assert (SRC / "build" / "libstrutil.a").is_file()
    assert os.access(SRC / "build" / "strtool", os.X_OK)
    assert make(SRC, "-q", check=False).returncode == 0


def test_default_build_outputs(built):
    assert (built / "build" / "libstrutil.a").is_file()
    assert os.access(built / "build" / "strtool", os.X_OK)


def test_archive_holds_exactly_the_objects(built):
    res = subprocess.run(["ar", "t", str(built / "build" / "libstrutil.a")], capture_output=True, text=True)
    assert sorted(res.stdout.split()) == OBJECTS


def test_archive_defines_the_api(built):
    res = subprocess.run(["nm", "--defined-only", str(built / "build" / "libstrutil.a")],
                         capture_output=True, text=True)
    for sym in ["su_trim", "su_upper", "su_lower", "su_reverse", "su_count", "su_split", "su_split_free"]:
        assert f" T {sym}\n" in res.stdout


def test_strtool_works_and_is_static_against_lib(built):
    tool = built / "build" / "strtool"
    assert strtool(tool, "upper", stdin="abc\n").stdout == "ABC\n"
    assert strtool(tool, "split", ";", stdin="x;y\n").stdout == "x|y\n"
    assert strtool(tool, "count", "aa", stdin="aaaaa\n").stdout == "2\n"
    ldd = subprocess.run(["ldd", str(tool)], capture_output=True, text=True).stdout
    assert "strutil" not in ldd
    assert not list((built / "build").rglob("*.so*"))


def test_build_is_warning_free_and_source_tree_untouched(tree):
    before = source_files(tree)
    res = make(tree)
    assert "warning:" not in res.stdout + res.stderr
    assert source_files(tree) == before


def test_second_make_does_nothing(built):
    before = build_mtimes(built)
    assert make(built, "-q", check=False).returncode == 0
    make(built)
    assert build_mtimes(built) == before


def test_touching_one_source_rebuilds_only_its_object(built):
    age_everything(built)
    before = build_mtimes(built)
    trim_obj, case_obj = find_object(built, "trim.o"), find_object(built, "case.o")
    os.utime(built / "src" / "trim.c", None)
    assert make(built, "-q", check=False).returncode != 0
    make(built)
    after = build_mtimes(built)
    assert after[trim_obj] > before[trim_obj]
    assert after[case_obj] == before[case_obj]
    assert after["build/libstrutil.a"] > before["build/libstrutil.a"]
    assert after["build/strtool"] > before["build/strtool"]


def test_touching_header_rebuilds_every_object(built):
    age_everything(built)
    before = build_mtimes(built)
    os.utime(built / "include" / "strutil.h", None)
    make(built)
    after = build_mtimes(built)
    for name in OBJECTS:
        obj = find_object(built, name)
        assert after[obj] > before[obj], name


def test_new_source_file_is_picked_up(built):
    (built / "src" / "extra.c").write_text('#include "strutil.h"\nint su_extra(void) { return 42; }\n')
    make(built)
    res = subprocess.run(["ar", "t", str(built / "build" / "libstrutil.a")], capture_output=True, text=True)
    assert sorted(res.stdout.split()) == sorted(OBJECTS + ["extra.o"])


def test_parallel_build_from_clean(tree):
    res = make(tree, "-j4")
    assert res.returncode == 0
    assert strtool(tree / "build" / "strtool", "reverse", stdin="abc\n").stdout == "cba\n"


def test_cflags_override_keeps_include_path(tree):
    make(tree, "CFLAGS=-O0 -g")
    out = subprocess.run(["file", str(tree / "build" / "strtool")], capture_output=True, text=True).stdout
    assert "debug_info" in out


def test_cc_override_is_used(tree, tmp_path):
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "mycc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec gcc "$@"\n')
    wrapper.chmod(0o755)
    make(tree, f"CC={wrapper}")
    calls = log.read_text().splitlines()
    assert sum(1 for c in calls if " -c " in f" {c} ") >= len(OBJECTS)
    default_calls = [c for c in calls if "-std=c11" in c and "-Wall" in c and "-Wextra" in c and "-O2" in c]
    assert default_calls


def test_make_check_passes_and_fails(tree):
    res = make(tree, "check")
    assert "ok   split" in res.stdout
    (tree / "tests" / "run_tests.sh").write_text("#!/bin/sh\necho broken\nexit 3\n")
    assert make(tree, "check", check=False).returncode != 0


def test_install_with_prefix(built, tmp_path):
    prefix = tmp_path / "prefix"
    make(built, "install", f"PREFIX={prefix}")
    bin_, lib, hdr = prefix / "bin/strtool", prefix / "lib/libstrutil.a", prefix / "include/strutil.h"
    assert stat.S_IMODE(bin_.stat().st_mode) == 0o755
    assert stat.S_IMODE(lib.stat().st_mode) == 0o644
    assert stat.S_IMODE(hdr.stat().st_mode) == 0o644
    assert hdr.read_bytes() == (built / "include/strutil.h").read_bytes()


def test_install_with_destdir(built, tmp_path):
    stage = tmp_path / "stage"
    make(built, "install", f"DESTDIR={stage}", "PREFIX=/opt/su")
    assert (stage / "opt/su/bin/strtool").is_file()
    assert (stage / "opt/su/lib/libstrutil.a").is_file()
    assert (stage / "opt/su/include/strutil.h").is_file()


def test_installed_library_links_a_client(built, tmp_path):
    prefix = tmp_path / "p"
    make(built, "install", f"PREFIX={prefix}")
    client = tmp_path / "client.c"
    client.write_text('#include <stdio.h>\n#include "strutil.h"\n'
                      'int main(void){char s[]="  hi  ";size_t n;char **f=su_split("a:b:c",\':\',&n);'
                      'printf("[%s] %zu %s\\n", su_trim(s), n, f[2]);su_split_free(f);return 0;}\n')
    exe = tmp_path / "client"
    subprocess.run(["gcc", str(client), f"-I{prefix}/include", f"-L{prefix}/lib", "-lstrutil", "-o", str(exe)],
                   check=True, timeout=60)
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout == "[hi] 3 c\n"


def test_clean_removes_build_only(built):
    before = source_files(built)
    make(built, "clean")
    assert not (built / "build").exists()
    assert source_files(built) == before
