import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

APP = Path("/app/inventory")
PRISTINE = Path(__file__).with_name("pristine")
OBJS = ["item.o", "main.o", "money.o", "parse.o", "report.o"]
STOCK_OUT = "lines=4 units=1427 value=172.93\nlargest=HINGE-XL value=132.93\n"


def make(tree, *args, check=True):
    res = subprocess.run(["make", "-C", str(tree), *args], capture_output=True, text=True, timeout=120)
    if check:
        assert res.returncode == 0, res.stdout + res.stderr
    return res


def inv(tree, *args):
    return subprocess.run([str(tree / "build" / "inv"), *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def tree(tmp_path):
    dest = tmp_path / "inventory"
    shutil.copytree(APP, dest, ignore=shutil.ignore_patterns("build"))
    return dest


@pytest.fixture
def built(tree):
    make(tree)
    return tree


def age(tree):
    """Sources old, generated files newer: any later touch is visible to make."""
    now = time.time()
    for p in tree.rglob("*"):
        if p.is_file():
            t = now - 1000 if "build" in p.relative_to(tree).parts else now - 2000
            os.utime(p, (t, t))


def objects(tree):
    found = {}
    for p in (tree / "build").rglob("*.o"):
        found[p.name] = p.stat().st_mtime_ns
    assert sorted(found) == OBJS, sorted(found)
    return found


def rebuilt_after(tree, change):
    age(tree)
    before = objects(tree)
    binary = (tree / "build" / "inv").stat().st_mtime_ns
    change()
    make(tree)
    after = objects(tree)
    relinked = (tree / "build" / "inv").stat().st_mtime_ns > binary
    return sorted(n for n in OBJS if after[n] != before[n]), relinked


def test_fresh_tree_builds_and_works(tree):
    res = make(tree)
    assert "warning:" not in res.stdout + res.stderr
    out = inv(tree, str(tree / "check" / "stock.csv"))
    assert out.returncode == 0
    assert out.stdout == STOCK_OUT


def test_second_make_does_nothing(built):
    assert make(built, "-q", check=False).returncode == 0
    before = {p: p.stat().st_mtime_ns for p in (built / "build").rglob("*") if p.is_file()}
    make(built)
    after = {p: p.stat().st_mtime_ns for p in (built / "build").rglob("*") if p.is_file()}
    assert after == before


def test_parallel_clean_builds(built):
    for _ in range(3):
        make(built, "clean")
        make(built, "-j8")
        assert inv(built, str(built / "check" / "stock.csv")).stdout == STOCK_OUT


def test_money_header_rebuilds_exact_dependents(built):
    changed, relinked = rebuilt_after(built, lambda: os.utime(built / "include" / "money.h", None))
    assert changed == ["money.o", "report.o"]
    assert relinked


def test_item_header_rebuilds_indirect_dependents(built):
    changed, relinked = rebuilt_after(built, lambda: os.utime(built / "include" / "item.h", None))
    assert changed == ["item.o", "main.o", "parse.o", "report.o"]
    assert relinked


def test_parse_header_rebuilds_exact_dependents(built):
    changed, _ = rebuilt_after(built, lambda: os.utime(built / "include" / "parse.h", None))
    assert changed == ["main.o", "parse.o"]


def test_source_change_rebuilds_one_object(built):
    changed, relinked = rebuilt_after(built, lambda: os.utime(built / "src" / "parse.c", None))
    assert changed == ["parse.o"]
    assert relinked


def test_struct_layout_change_gives_correct_binary(built):
    header = built / "include" / "item.h"
    text = header.read_text().replace("struct item {\n", "struct item {\n    int reserved[9];\n")
    age(built)
    header.write_text(text)
    os.utime(built / "src" / "item.c", None)
    make(built)
    out = inv(built, str(built / "check" / "stock.csv"))
    assert out.stdout == STOCK_OUT


def test_version_bump(built):
    def bump():
        (built / "VERSION").write_text("2.0.0-rc1\n")
    changed, relinked = rebuilt_after(built, bump)
    assert changed == ["main.o"]
    assert relinked
    assert inv(built, "--version").stdout == "inv 2.0.0-rc1\n"
    assert (built / "build" / "version.h").is_file()


def test_make_check_runs_even_when_up_to_date(built):
    for _ in range(2):
        res = make(built, "check")
        assert "ok stock.csv" in res.stdout


def test_make_check_fails_when_checks_fail(built):
    (built / "check" / "run.sh").write_text("#!/usr/bin/env bash\necho nope\nexit 4\n")
    assert make(built, "check", check=False).returncode != 0


def test_install_with_prefix_and_destdir(built, tmp_path):
    stage = tmp_path / "stage"
    make(built, "install", f"DESTDIR={stage}", "PREFIX=/opt/inv")
    target = stage / "opt/inv/bin/inv"
    assert target.is_file()
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert subprocess.run([str(target), "--version"], capture_output=True, text=True).stdout == "inv 1.4.2\n"


def test_install_default_prefix(built, tmp_path):
    stage = tmp_path / "stage2"
    make(built, "install", f"DESTDIR={stage}")
    assert (stage / "usr/local/bin/inv").is_file()


def test_clean_removes_generated_only(built):
    make(built, "clean")
    leftovers = [p for p in (built / "build").rglob("*") if p.is_file()] if (built / "build").exists() else []
    assert leftovers == []
    assert (built / "src" / "main.c").is_file() and (built / "VERSION").is_file()
    make(built)
    assert inv(built, "--version").returncode == 0


def test_compile_flags_kept(tree):
    res = make(tree, "-n")
    compiles = [l for l in res.stdout.splitlines() if " -c " in l]
    assert len(compiles) == len(OBJS)
    for line in compiles:
        for flag in ("-std=c11", "-Wall", "-Wextra", "-O2"):
            assert flag in line.split(), line


def test_app_tree_up_to_date_and_sources_untouched():
    assert make(APP, "-q", check=False).returncode == 0
    assert inv(APP, str(APP / "check" / "stock.csv")).stdout == STOCK_OUT
    for p in PRISTINE.rglob("*"):
        if p.is_file():
            rel = p.relative_to(PRISTINE)
            assert (APP / rel).read_bytes() == p.read_bytes(), f"{rel} was modified"
