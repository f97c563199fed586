import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/permaudit"


def run(*args):
    return subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=60)


def tree(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o755)
    return root


def touch(path, mode=0o644, text="x\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def mkdir(path, mode=0o755):
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(mode)
    return path


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_clean_tree_has_no_findings(tmp_path):
    root = tree(tmp_path)
    touch(root / "etc" / "app.conf", 0o640)
    touch(root / "bin" / "tool", 0o755)
    mkdir(root / "shared", 0o2775)
    out = run(root)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""


def test_world_writable_file_and_dir(tmp_path):
    root = tree(tmp_path)
    touch(root / "data" / "open.txt", 0o666)
    mkdir(root / "drop", 0o777)
    out = run(root)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "world-writable 0666 data/open.txt",
        "world-writable 0777 drop",
    ]


def test_sticky_directory_is_exempt_but_not_sticky_file(tmp_path):
    root = tree(tmp_path)
    mkdir(root / "tmp", 0o1777)
    touch(root / "tmp" / "f", 0o1666)
    mkdir(root / "tmp2", 0o1733)
    out = run(root)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["world-writable 1666 tmp/f"]


def test_setuid_and_setgid_on_files_only(tmp_path):
    root = tree(tmp_path)
    touch(root / "bin" / "su-ish", 0o4755)
    touch(root / "bin" / "mailer", 0o2711)
    mkdir(root / "shared", 0o2770)
    mkdir(root / "odd", 0o4755)
    out = run(root)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["setgid 2711 bin/mailer", "setuid 4755 bin/su-ish"]


def test_unknown_owner_and_group(tmp_path):
    root = tree(tmp_path)
    f = touch(root / "orphan.txt", 0o600)
    os.chown(f, 4242, 0)
    g = touch(root / "nogroup.txt", 0o600)
    os.chown(g, 0, 4343)
    k = touch(root / "known.txt", 0o600)
    os.chown(k, 2001, 2001)
    out = run(root)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["no-group 0600 nogroup.txt", "no-owner 0600 orphan.txt"]


def test_findings_for_one_path_follow_table_order(tmp_path):
    root = tree(tmp_path)
    f = touch(root / "bad", 0o644)
    os.chown(f, 4242, 4343)
    f.chmod(0o6777)
    out = run(root)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "world-writable 6777 bad",
        "setuid 6777 bad",
        "setgid 6777 bad",
        "no-owner 6777 bad",
        "no-group 6777 bad",
    ]


def test_root_itself_is_dot(tmp_path):
    root = tree(tmp_path)
    root.chmod(0o777)
    touch(root / "ok.txt")
    out = run(root)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["world-writable 0777 ."]


def test_symlinks_are_not_followed_or_reported(tmp_path):
    outside = mkdir(tmp_path / "outside", 0o777)
    touch(outside / "victim", 0o4777)
    root = tree(tmp_path)
    (root / "link-to-dir").symlink_to(outside)
    (root / "link-to-file").symlink_to(outside / "victim")
    (root / "dangling").symlink_to(tmp_path / "nowhere")
    out = run(root)
    assert out.returncode == 0, out.stdout
    assert out.stdout == ""


def test_special_files_are_ignored(tmp_path):
    root = tree(tmp_path)
    os.mkfifo(root / "pipe")
    (root / "pipe").chmod(0o666)
    out = run(root)
    assert out.returncode == 0
    assert out.stdout == ""


def test_sorted_bytewise_with_spaces(tmp_path):
    root = tree(tmp_path)
    for name in ["a/x", "a b", "a-b", "a.b", "B", "a"]:
        p = root / name
        if name == "a":
            mkdir(p, 0o777)
        else:
            touch(p, 0o666)
    root.chmod(0o757)
    out = run(root)
    assert out.returncode == 1
    assert [line.split(" ", 2)[2] for line in out.stdout.splitlines()] == [
        ".", "B", "a", "a b", "a-b", "a.b", "a/x",
    ]
    assert out.stdout.splitlines()[3] == "world-writable 0666 a b"


def test_trailing_slash_in_root(tmp_path):
    root = tree(tmp_path)
    touch(root / "sub" / "w.txt", 0o662)
    a = run(root)
    b = run(str(root) + "/")
    assert a.stdout == b.stdout == "world-writable 0662 sub/w.txt\n"


def test_large_tree(tmp_path):
    root = tree(tmp_path)
    for i in range(40):
        d = mkdir(root / f"d{i:02d}")
        for j in range(25):
            touch(d / f"f{j:02d}.txt", 0o644)
    touch(root / "d17" / "f03.txt", 0o646)
    touch(root / "d33" / "f24.txt", 0o4750)
    out = run(root)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["world-writable 0646 d17/f03.txt", "setuid 4750 d33/f24.txt"]


def test_audit_does_not_change_anything(tmp_path):
    root = tree(tmp_path)
    f = touch(root / "s", 0o4777)
    d = mkdir(root / "w", 0o777)
    run(root)
    assert f.stat().st_mode & 0o7777 == 0o4777
    assert d.stat().st_mode & 0o7777 == 0o777


@pytest.mark.parametrize("args", [[], ["/nonexistent/root"], ["/etc/hostname"], ["/srv", "/srv"]],
                         ids=["no-args", "missing", "regular-file", "two-args"])
def test_usage_errors_exit_2(args):
    out = run(*args)
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert out.stdout == ""


def test_legacy_report_saved():
    assert Path("/app/legacy-audit.txt").read_text() == (
        "setuid 4755 bin/backup\n"
        "setgid 2755 bin/rotate\n"
        "world-writable 6777 bin/swiss\n"
        "setuid 6777 bin/swiss\n"
        "setgid 6777 bin/swiss\n"
        "no-owner 0644 conf/app.conf.bak\n"
        "world-writable 0666 htdocs/index.html\n"
        "world-writable 0777 htdocs/uploads\n"
        "no-group 0755 shared files\n"
        "world-writable 0646 shared files/team notes.txt\n"
    )
