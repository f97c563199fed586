import grp
import hashlib
import os
import pwd
import stat
import subprocess
from pathlib import Path

ROOT = Path("/srv/shop")
CONTENT_DIGEST = "75337dbdb05d19a465a3e1f79128366c013c6eddc93548dc9322aed1c329211a"


def owner(path):
    st = os.lstat(path)
    return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name, stat.S_IMODE(st.st_mode)


def walk(sub):
    """Every directory and regular file at or below ROOT/sub, as paths relative to ROOT."""
    start = ROOT / sub
    out = [(start, True)]
    for dirpath, dirnames, filenames in os.walk(start):
        for d in dirnames:
            if not (Path(dirpath) / d).is_symlink():
                out.append((Path(dirpath) / d, True))
        for f in filenames:
            p = Path(dirpath) / f
            if not p.is_symlink():
                out.append((p, False))
    return out


def mismatches(entries, want):
    bad = []
    for path, is_dir in entries:
        expected = want(path, is_dir)
        if expected is None:
            continue
        got = owner(path)
        if got != expected:
            bad.append(f"{path}: {got[0]}:{got[1]} {got[2]:04o}, want "
                       f"{expected[0]}:{expected[1]} {expected[2]:04o}")
    return bad


def as_user(user, command):
    return subprocess.run(["runuser", "-u", user, "--", "bash", "-c", command],
                          capture_output=True, text=True, timeout=30)


def test_top_directory():
    assert owner(ROOT) == ("deploy", "deploy", 0o2775)


def test_release_directories():
    bad = mismatches(walk("releases"), lambda p, d: ("deploy", "deploy", 0o2775) if d else None)
    assert bad == []


def test_release_executables():
    def want(p, is_dir):
        if is_dir or not (p.parent.name == "bin" or p.name.endswith(".sh")):
            return None
        return ("deploy", "deploy", 0o775)
    entries = walk("releases")
    assert len([1 for p, d in entries if want(p, d)]) == 8
    assert mismatches(entries, want) == []


def test_release_plain_files():
    def want(p, is_dir):
        if is_dir or p.parent.name == "bin" or p.name.endswith(".sh"):
            return None
        return ("deploy", "deploy", 0o664)
    assert mismatches(walk("releases"), want) == []


def test_readme_and_shared():
    assert owner(ROOT / "README.md") == ("deploy", "deploy", 0o664)
    assert owner(ROOT / "shared") == ("deploy", "deploy", 0o755)


def test_config():
    assert owner(ROOT / "shared/config") == ("root", "shop", 0o750)
    assert owner(ROOT / "shared/config/app.env") == ("root", "shop", 0o640)
    assert owner(ROOT / "shared/config/app.ini") == ("root", "shop", 0o640)


def test_uploads():
    want = lambda p, d: ("shop", "shop", 0o2770 if d else 0o660)  # noqa: E731
    entries = walk("shared/uploads")
    assert len(entries) == 1 + 2 + 6 + 30
    assert mismatches(entries, want) == []


def test_logs():
    want = lambda p, d: ("shop", "adm", 0o2750 if d else 0o640)  # noqa: E731
    assert mismatches(walk("shared/logs"), want) == []


def test_nothing_world_writable_or_setuid():
    bad = []
    for path, is_dir in walk("."):
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        if mode & 0o002 or (not is_dir and mode & 0o6000):
            bad.append(f"{path} {mode:04o}")
    assert bad == []


def test_current_symlink():
    link = ROOT / "current"
    assert link.is_symlink()
    assert os.readlink(link) == "releases/2024-06-12"
    st = os.lstat(link)
    assert (pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name) == ("deploy", "deploy")


def test_fixed_in_place_without_content_changes():
    assert owner(ROOT / "shared/config/app.env") == ("root", "shop", 0o640)
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(ROOT)):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = str(p.relative_to(ROOT))
            if p.is_symlink():
                h.update(f"L {rel} {os.readlink(p)}\n".encode())
            elif p.is_dir():
                h.update(f"D {rel}\n".encode())
            else:
                h.update(f"F {rel} ".encode() + p.read_bytes() + b"\n")
    assert h.hexdigest() == CONTENT_DIGEST


def test_developer_can_add_to_release_with_group_inherited():
    target = ROOT / "releases/2024-06-12/app/alice-probe.txt"
    try:
        out = as_user("alice", f"umask 002; echo hi > {target}")
        assert out.returncode == 0, out.stderr
        st = os.stat(target)
        assert grp.getgrgid(st.st_gid).gr_name == "deploy"
        assert pwd.getpwuid(st.st_uid).pw_name == "alice"
        out = as_user("bob", f"echo more >> {target}")
        assert out.returncode == 0, out.stderr
    finally:
        target.unlink(missing_ok=True)


def test_service_reads_secrets_developers_cannot():
    assert as_user("shop", "cat /srv/shop/shared/config/app.env").stdout.startswith("SECRET_KEY=")
    for user in ("alice", "bob", "carol"):
        out = as_user(user, "cat /srv/shop/shared/config/app.env")
        assert out.returncode != 0, user
        assert out.stdout == ""


def test_service_cannot_modify_code():
    out = as_user("shop", "echo hacked >> /srv/shop/current/app/main.py")
    assert out.returncode != 0
    out = as_user("shop", "touch /srv/shop/current/app/new.py")
    assert out.returncode != 0
    assert not (ROOT / "releases/2024-06-12/app/new.py").exists()


def test_service_can_run_code():
    out = as_user("shop", "/srv/shop/current/bin/worker && cat /srv/shop/current/app/cart.py")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("worker running\n# cart module of release 2024-06-12")


def test_uploads_private_to_service():
    target = ROOT / "shared/uploads/2024/03/probe.jpg"
    try:
        out = as_user("shop", f"umask 007; echo img > {target}")
        assert out.returncode == 0, out.stderr
        assert grp.getgrgid(os.stat(target).st_gid).gr_name == "shop"
    finally:
        target.unlink(missing_ok=True)
    for user in ("alice", "deploy", "carol"):
        assert as_user(user, "ls /srv/shop/shared/uploads").returncode != 0, user


def test_operator_reads_logs_developers_cannot():
    out = as_user("carol", "cat /srv/shop/shared/logs/app.log /srv/shop/shared/logs/old/app.log.1")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "started\nolder\n"
    assert as_user("carol", "touch /srv/shop/shared/logs/x").returncode != 0
    for user in ("alice", "deploy"):
        assert as_user(user, "cat /srv/shop/shared/logs/app.log").returncode != 0, user
