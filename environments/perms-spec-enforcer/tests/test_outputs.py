import grp
import os
import pwd
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest

TOOL = "/app/permctl"


def run(*args):
    return subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=60)


def write_spec(tmp_path, text):
    spec = tmp_path / "test.spec"
    spec.write_text(textwrap.dedent(text).lstrip("\n"))
    return spec


def make_tree(tmp_path, files=(), dirs=()):
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o755)
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(f"{f}\n")
    for p in [root, *root.rglob("*")]:
        os.chown(p, 0, 0)
        p.chmod(0o755 if p.is_dir() else 0o644)
    return root


def meta(path):
    st = os.lstat(path)
    return st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_check_reports_drift_in_order(tmp_path):
    root = make_tree(tmp_path, files=["b.txt", "a/x.conf"])
    (root / "b.txt").chmod(0o666)
    os.chown(root / "a" / "x.conf", 4001, 0)
    spec = write_spec(tmp_path, """
        /**   root  root  0644  0755
        /a/*  -     ops   -     -
    """)
    out = run("check", spec, root)
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines() == [
        "/a/x.conf owner app -> root",
        "/a/x.conf group root -> ops",
        "/b.txt mode 0666 -> 0644",
    ]
    assert meta(root / "b.txt") == (0, 0, 0o666)


def test_check_clean_tree_exits_0(tmp_path):
    root = make_tree(tmp_path, files=["a", "d/b"])
    spec = write_spec(tmp_path, """
        # comment
           # indented comment

        /**   root root 644 755
    """)
    out = run("check", spec, root)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == ""


def test_apply_fixes_prints_and_converges(tmp_path):
    root = make_tree(tmp_path, files=["etc/app.conf", "bin/run", "data/db"])
    spec = write_spec(tmp_path, """
        /**       root  root  0644  0755
        /etc/**   -     ops   0640  0750
        /bin/*    -     -     0755  -
        /data/**  app   app   0600  2770
    """)
    before = run("check", spec, root)
    out = run("apply", spec, root)
    assert out.returncode == 0, out.stderr
    assert out.stdout == before.stdout != ""
    assert meta(root / "etc") == (0, 4100, 0o750)
    assert meta(root / "etc/app.conf") == (0, 4100, 0o640)
    assert meta(root / "bin/run") == (0, 0, 0o755)
    assert meta(root / "data") == (4001, 4001, 0o2770)
    assert meta(root / "data/db") == (4001, 4001, 0o600)
    again = run("check", spec, root)
    assert again.returncode == 0 and again.stdout == ""


def test_last_matching_rule_wins_per_attribute(tmp_path):
    root = make_tree(tmp_path, files=["data/run.sh", "data/secret.txt", "run.sh"])
    spec = write_spec(tmp_path, """
        /**        root  root  0644  0755
        *.sh       -     -     0755  -
        /data/**   app   -     0640  -
        secret*    -     ops   0600  -
    """)
    out = run("apply", spec, root)
    assert out.returncode == 0, out.stderr
    assert meta(root / "run.sh") == (0, 0, 0o755)
    assert meta(root / "data/run.sh") == (4001, 0, 0o640)
    assert meta(root / "data/secret.txt") == (4001, 4100, 0o600)
    assert meta(root / "data") == (4001, 0, 0o755)


def test_dash_leaves_attribute_alone(tmp_path):
    root = make_tree(tmp_path, files=["f"])
    os.chown(root / "f", 4002, 4002)
    (root / "f").chmod(0o604)
    spec = write_spec(tmp_path, "/f  -  ops  -  -\n")
    out = run("check", spec, root)
    assert out.stdout.splitlines() == ["/f group web -> ops"]
    run("apply", spec, root)
    assert meta(root / "f") == (4002, 4100, 0o604)


def test_unanchored_matches_any_depth_anchored_only_root(tmp_path):
    root = make_tree(tmp_path, files=["x.log", "a/x.log", "a/b/x.log"])
    spec = write_spec(tmp_path, """
        x.log     -  -  0600  -
        /a/x.log  -  -  0640  -
    """)
    run("apply", spec, root)
    assert meta(root / "x.log")[2] == 0o600
    assert meta(root / "a/x.log")[2] == 0o640
    assert meta(root / "a/b/x.log")[2] == 0o600


def test_star_does_not_cross_slash(tmp_path):
    root = make_tree(tmp_path, files=["a/b", "a/c/d", "a/.hidden"])
    spec = write_spec(tmp_path, "/a/*  -  -  0600  0700\n")
    run("apply", spec, root)
    assert meta(root / "a/b")[2] == 0o600
    assert meta(root / "a/.hidden")[2] == 0o600
    assert meta(root / "a/c")[2] == 0o700
    assert meta(root / "a/c/d")[2] == 0o644
    assert meta(root / "a")[2] == 0o755


def test_double_star_matches_zero_or_more_components(tmp_path):
    root = make_tree(tmp_path, files=["a/x", "a/b/c/x", "a/b/y", "z/x"])
    spec = write_spec(tmp_path, "/a/**/x  -  -  0600  -\n/a/**  -  -  -  0700\n")
    out = run("apply", spec, root)
    assert out.returncode == 0, out.stderr
    assert meta(root / "a/x")[2] == 0o600
    assert meta(root / "a/b/c/x")[2] == 0o600
    assert meta(root / "a/b/y")[2] == 0o644
    assert meta(root / "z/x")[2] == 0o644
    assert meta(root / "a")[2] == 0o700
    assert meta(root / "a/b/c")[2] == 0o700
    assert meta(root)[2] == 0o755


def test_question_mark_and_classes(tmp_path):
    root = make_tree(tmp_path, files=["f1", "f2", "f10", "fa", "g1"])
    spec = write_spec(tmp_path, "/f?  -  -  0600  -\n/[!f]*  -  -  0640  -\n/f[a-c]  -  -  0400  -\n")
    run("apply", spec, root)
    assert [meta(root / n)[2] for n in ["f1", "f2", "f10", "fa", "g1"]] == [
        0o600, 0o600, 0o644, 0o400, 0o640]


def test_file_modes_and_dir_modes_are_separate(tmp_path):
    root = make_tree(tmp_path, files=["d/f"])
    spec = write_spec(tmp_path, "/**  -  -  0600  -\n")
    run("apply", spec, root)
    assert meta(root / "d")[2] == 0o755
    assert meta(root / "d/f")[2] == 0o600
    spec = write_spec(tmp_path, "/**  -  -  -  0711\n")
    run("apply", spec, root)
    assert meta(root / "d")[2] == 0o711
    assert meta(root)[2] == 0o711
    assert meta(root / "d/f")[2] == 0o600


def test_root_pattern_matches_only_root(tmp_path):
    root = make_tree(tmp_path, files=["a"], dirs=["d"])
    spec = write_spec(tmp_path, "/  -  ops  -  0750\n")
    out = run("check", spec, root)
    assert out.stdout.splitlines() == ["/ group root -> ops", "/ mode 0755 -> 0750"]


def test_numeric_ids_and_unknown_current_ids(tmp_path):
    root = make_tree(tmp_path, files=["n", "m"])
    os.chown(root / "m", 7777, 8888)
    spec = write_spec(tmp_path, "/n  4001  4100  -  -\n/m  9999  4002  -  -\n")
    out = run("check", spec, root)
    assert out.stdout.splitlines() == [
        "/m owner 7777 -> 9999",
        "/m group 8888 -> web",
        "/n owner root -> app",
        "/n group root -> ops",
    ]
    run("apply", spec, root)
    assert meta(root / "m")[:2] == (9999, 4002)


def test_special_bits(tmp_path):
    root = make_tree(tmp_path, files=["suid", "plain"], dirs=["shared"])
    (root / "plain").chmod(0o4755)
    (root / "shared").chmod(0o2775)
    spec = write_spec(tmp_path, "/suid  app  -  4750  -\n/plain  -  -  755  -\n/shared  -  -  -  775\n")
    out = run("check", spec, root)
    assert out.stdout.splitlines() == [
        "/plain mode 4755 -> 0755",
        "/shared mode 2775 -> 0775",
        "/suid owner root -> app",
        "/suid mode 0644 -> 4750",
    ]
    out = run("apply", spec, root)
    assert out.returncode == 0, out.stderr
    assert meta(root / "suid") == (4001, 0, 0o4750)
    assert meta(root / "plain")[2] == 0o755
    assert meta(root / "shared")[2] == 0o775


def test_owner_change_keeps_wanted_setuid(tmp_path):
    root = make_tree(tmp_path, files=["tool"])
    (root / "tool").chmod(0o4755)
    spec = write_spec(tmp_path, "/tool  app  app  4755  -\n")
    out = run("apply", spec, root)
    assert out.stdout.splitlines() == ["/tool owner root -> app", "/tool group root -> app"]
    assert meta(root / "tool") == (4001, 4001, 0o4755)
    assert run("check", spec, root).returncode == 0


def test_symlinks_are_ignored(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("v")
    (outside / "victim").chmod(0o644)
    root = make_tree(tmp_path, files=["real"])
    (root / "link-file").symlink_to(outside / "victim")
    (root / "link-dir").symlink_to(outside)
    spec = write_spec(tmp_path, "/**  app  app  0600  0700\n")
    out = run("apply", spec, root)
    assert out.returncode == 0, out.stderr
    assert "link" not in out.stdout
    assert meta(outside / "victim") == (0, 0, 0o644)
    assert meta(outside)[:2] == (0, 0)
    assert os.lstat(root / "link-file").st_uid == 0
    assert meta(root / "real") == (4001, 4001, 0o600)


def test_paths_sorted_bytewise_with_spaces(tmp_path):
    root = make_tree(tmp_path, files=["a b", "a-b", "a/b", "B", "a.b"])
    spec = write_spec(tmp_path, "*  -  -  0600  0700\n")
    out = run("check", spec, root)
    assert [line.rsplit(" mode ", 1)[0] for line in out.stdout.splitlines()] == [
        "/B", "/a", "/a b", "/a-b", "/a.b", "/a/b"]


@pytest.mark.parametrize(
    "text, line",
    [
        ("/** root root 0644 0755\n/x root root 0644\n", 2),
        ("# c\n\n/x root root 0689 -\n", 3),
        ("/x root root 64 -\n", 1),
        ("/** root root - -\n/x nosuchuser - - -\n", 2),
        ("/x - nosuchgroup - -\n", 1),
    ],
    ids=["field-count", "bad-digit", "short-mode", "unknown-user", "unknown-group"],
)
def test_spec_errors_change_nothing(tmp_path, text, line):
    root = make_tree(tmp_path, files=["x"])
    (root / "x").chmod(0o666)
    spec = write_spec(tmp_path, "/**  app  app  0600  0700\n" + text)
    for action in ("check", "apply"):
        out = run(action, spec, root)
        assert out.returncode == 2
        assert f"{spec}:{line + 1}:" in out.stderr
        assert out.stdout == ""
    assert meta(root / "x") == (0, 0, 0o666)


@pytest.mark.parametrize(
    "args",
    [[], ["check"], ["fix", "SPEC", "ROOT"], ["check", "/nonexistent.spec", "ROOT"],
     ["check", "SPEC", "/nonexistent/root"], ["apply", "SPEC", "ROOT", "extra"]],
    ids=["no-args", "one-arg", "bad-action", "missing-spec", "missing-root", "extra-arg"],
)
def test_usage_errors_exit_2(tmp_path, args):
    root = make_tree(tmp_path, files=["x"])
    spec = write_spec(tmp_path, "/** app app 0600 0700\n")
    out = run(*[{"SPEC": spec, "ROOT": root}.get(a, a) for a in args])
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert meta(root / "x") == (0, 0, 0o644)


def owner_of(path):
    st = os.lstat(path)
    return (pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name,
            f"{stat.S_IMODE(st.st_mode):04o}")


@pytest.mark.parametrize(
    "rel, want",
    [
        ("", ("root", "root", "0755")),
        ("bin", ("root", "root", "0755")),
        ("bin/stop", ("root", "root", "0755")),
        ("install.sh", ("root", "root", "0755")),
        ("etc/conf.d", ("root", "ops", "0750")),
        ("etc/conf.d/secret.key", ("root", "ops", "0600")),
        ("data/secret-token", ("app", "app", "0640")),
        ("data/db", ("app", "app", "2750")),
        ("data/db/app.db", ("app", "app", "0640")),
        ("data/cache/tmp", ("app", "app", "0700")),
        ("data/cache/tmp/blob", ("app", "app", "0600")),
        ("logs/archive", ("web", "ops", "2770")),
        ("public/index page.html", ("web", "web", "0644")),
        ("public/assets/site.css", ("web", "web", "0644")),
    ],
)
def test_deploy_tree_matches_spec(rel, want):
    assert owner_of(Path("/srv/deploy") / rel) == want


def test_deploy_tree_symlinks_untouched():
    assert owner_of("/srv/deploy/bin/stop") == ("root", "root", "0755")
    assert os.readlink("/srv/deploy/public/shadow-link") == "/etc/shadow"
    assert owner_of("/etc/shadow")[:2] == ("root", "shadow")
    assert owner_of("/etc")[2] == "0755"
