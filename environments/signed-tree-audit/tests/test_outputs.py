import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/treeaudit"
SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/")


def run(*args):
    return subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=90)


def openssl(*args):
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", d / "rsa.key")
    openssl("pkey", "-in", d / "rsa.key", "-pubout", "-out", d / "rsa.pub")
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", d / "ec.key")
    openssl("pkey", "-in", d / "ec.key", "-pubout", "-out", d / "ec.pub")
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", d / "other.key")
    return d


def enc(raw):
    return "".join(chr(b) if b in SAFE else f"%{b:02X}" for b in raw)


def reference_manifest(root):
    entries = {}

    def rec(top, prefix):
        for name in os.listdir(top):
            full = os.path.join(top, name)
            rel = prefix + name
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                entries[enc(rel)] = f"l 0777 0 {enc(os.readlink(full))}"
            elif stat.S_ISDIR(st.st_mode):
                entries[enc(rel)] = f"d {stat.S_IMODE(st.st_mode):04o} 0 -"
                rec(full, rel + b"/")
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(Path(os.fsdecode(full)).read_bytes()).hexdigest()
                entries[enc(rel)] = f"f {stat.S_IMODE(st.st_mode):04o} {st.st_size} {digest}"

    rec(os.fsencode(root), b"")
    return "treeaudit-manifest v1\n" + "".join(f"{entries[p]} {p}\n" for p in sorted(entries))


def write(path, data=b"", mode=0o644):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode)


def build_tree(root):
    root = Path(root)
    root.mkdir()
    write(root / "index.html", b"<h1>hi</h1>\n")
    write(root / "bin/tool", b"#!/bin/sh\n", 0o755)
    write(root / "bin/su-helper", b"x", 0o4755)
    write(root / "conf/app.ini", b"k=v\n", 0o600)
    os.chmod(root / "conf", 0o750)
    write(root / "a b/c.txt", b"spaces")
    write(root / "a-b", b"dash")
    write(root / "aB", b"upper")
    write(root / "docs/naïve 100%.md", "résumé".encode())
    write(root / os.fsdecode(b"raw/\xff\xfe.bin"), b"\x00" * 10)
    write(root / "raw/new\nline", b"nl")
    (root / "empty-dir").mkdir()
    (root / "tmp").mkdir()
    os.chmod(root / "tmp", 0o1777)
    write(root / "tmp/.keep")
    os.symlink("index.html", root / "home")
    os.symlink("/etc", root / "etc-link")
    os.symlink("does not exist", root / "dangling")
    os.mkfifo(root / "tmp/pipe")
    return root


def snapshot(tmp_path, keys, root, key="rsa.key"):
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    res = run("snapshot", root, keys / key, out_dir)
    assert res.returncode == 0, res.stderr
    return out_dir / "manifest.txt", out_dir / "manifest.sig"


def verify(root, pub, manifest, sig):
    res = run("verify", root, pub, manifest, sig)
    return res.returncode, res.stdout.splitlines()


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_deployed_app_audit():
    code, lines = verify("/srv/app", "/app/keys/audit.pub", "/app/baseline/manifest.txt", "/app/baseline/manifest.sig")
    assert code == 1
    assert lines == [
        "MODE bin/healthcheck 0755 -> 4755",
        "TYPE config/settings.ini f -> l",
        "TARGET current",
        "CONTENT index.php",
        "ADDED releases/2024-04-01-evil",
        "ADDED releases/2024-04-01-evil/VERSION",
        "CONTENT static/css/site.css",
        "MODE static/css/site.css 0644 -> 0666",
        "REMOVED static/js/app.js",
        "ADDED uploads/shell.php",
        "changes: 10",
    ]


def test_ticket_baseline_is_rejected():
    res = run("verify", "/srv/app", "/app/keys/audit.pub",
              "/app/baseline-from-ticket/manifest.txt", "/app/baseline-from-ticket/manifest.sig")
    assert res.returncode == 3
    assert res.stdout == "SIGNATURE INVALID\n"


def test_snapshot_manifest_exact(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    manifest, _ = snapshot(tmp_path, keys, root)
    assert manifest.read_text(encoding="ascii") == reference_manifest(root)


def test_snapshot_encoding_details(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    text = snapshot(tmp_path, keys, root)[0].read_text(encoding="ascii").splitlines()
    assert text[0] == "treeaudit-manifest v1"
    paths = [line.split(" ")[4] for line in text[1:]]
    assert paths == sorted(paths)
    assert "docs/na%C3%AFve%20100%25.md" in paths
    assert "raw/%FF%FE.bin" in paths and "raw/new%0Aline" in paths
    assert "l 0777 0 does%20not%20exist dangling" in text
    assert "d 1777 0 - tmp" in text and "d 0755 0 - empty-dir" in text
    assert any(line.startswith("f 4755 1 ") and line.endswith(" bin/su-helper") for line in text)
    assert not any(p.startswith("etc-link/") for p in paths)
    assert "tmp/pipe" not in paths


def test_snapshot_signature_verifies_with_openssl(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    manifest, sig = snapshot(tmp_path, keys, root)
    res = subprocess.run(["openssl", "dgst", "-sha256", "-verify", keys / "rsa.pub", "-signature", sig, manifest],
                         capture_output=True, text=True)
    assert res.returncode == 0 and "Verified OK" in res.stdout


def test_clean_tree_rsa_and_ec(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    for kind in ("rsa", "ec"):
        manifest, sig = snapshot(tmp_path, keys, root, key=f"{kind}.key")
        code, lines = verify(root, keys / f"{kind}.pub", manifest, sig)
        assert (code, lines) == (0, ["changes: 0"]), kind


def test_detects_every_kind_of_change(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    manifest, sig = snapshot(tmp_path, keys, root)
    (root / "index.html").write_bytes(b"<h1>ho</h1>\n")            # same size, new content
    os.chmod(root / "bin/tool", 0o777)                               # mode only
    write(root / "conf/app.ini", b"k=changed\n", 0o644)              # content + mode
    os.remove(root / "home")
    os.symlink("bin/tool", root / "home")                            # link target
    os.remove(root / "a-b")
    (root / "a-b").mkdir()                                           # file -> dir
    write(root / "new/deep/file.txt", b"n")                          # added subtree
    for p in sorted((root / "docs").rglob("*"), reverse=True):
        p.unlink()
    (root / "docs").rmdir()                                          # removed subtree
    code, lines = verify(root, keys / "rsa.pub", manifest, sig)
    assert code == 1
    assert lines == [
        "TYPE a-b f -> d",
        "MODE bin/tool 0755 -> 0777",
        "CONTENT conf/app.ini",
        "MODE conf/app.ini 0600 -> 0644",
        "REMOVED docs",
        "REMOVED docs/na%C3%AFve%20100%25.md",
        "TARGET home",
        "CONTENT index.html",
        "ADDED new",
        "ADDED new/deep",
        "ADDED new/deep/file.txt",
        "changes: 11",
    ]


def test_symlinks_and_special_files_not_followed(tmp_path, keys):
    outside = tmp_path / "outside"
    write(outside / "secret.txt", b"v1")
    root = tmp_path / "root"
    write(root / "x.txt", b"x")
    os.symlink(outside, root / "ext")
    manifest, sig = snapshot(tmp_path, keys, root)
    (outside / "secret.txt").write_bytes(b"v2 changed")
    write(outside / "more.txt", b"m")
    os.mkfifo(root / "fifo")
    code, lines = verify(root, keys / "rsa.pub", manifest, sig)
    assert (code, lines) == (0, ["changes: 0"])
    os.chmod(root / "x.txt", 0o600)
    os.remove(root / "ext")
    os.symlink(outside / "secret.txt", root / "ext")
    code, lines = verify(root, keys / "rsa.pub", manifest, sig)
    assert code == 1
    assert lines == ["TARGET ext", "MODE x.txt 0644 -> 0600", "changes: 2"]


def test_tampered_manifest_signature_invalid(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    manifest, sig = snapshot(tmp_path, keys, root)
    text = manifest.read_text()
    manifest.write_text(text.replace("f 0600 4 ", "f 0644 4 "))
    res = run("verify", root, keys / "rsa.pub", manifest, sig)
    assert (res.returncode, res.stdout) == (3, "SIGNATURE INVALID\n")


def test_signature_from_other_key_invalid(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    manifest, sig = snapshot(tmp_path, keys, root, key="other.key")
    res = run("verify", root, keys / "rsa.pub", manifest, sig)
    assert (res.returncode, res.stdout) == (3, "SIGNATURE INVALID\n")
    res = run("verify", root, keys / "ec.pub", manifest, sig)
    assert res.returncode == 3


def test_signed_but_malformed_manifest_exits_2(tmp_path, keys):
    root = tmp_path / "root"
    write(root / "a", b"a")
    for body in ("treeaudit-manifest v2\n", "treeaudit-manifest v1\nx 0644 1 - a\n",
                 "treeaudit-manifest v1\nf 644 1 abc a\n"):
        manifest = tmp_path / "m.txt"
        manifest.write_text(body)
        openssl("dgst", "-sha256", "-sign", keys / "rsa.key", "-out", tmp_path / "m.sig", manifest)
        res = run("verify", root, keys / "rsa.pub", manifest, tmp_path / "m.sig")
        assert res.returncode == 2, body
        assert res.stderr.strip() != ""


def test_usage_errors_exit_2(tmp_path, keys):
    root = tmp_path / "root"
    write(root / "a", b"a")
    manifest, sig = snapshot(tmp_path, keys, root)
    for args in (["inspect", root], ["verify", root, keys / "rsa.pub", manifest],
                 ["snapshot", root, keys / "rsa.key"], [],
                 ["verify", root, keys / "missing.pub", manifest, sig],
                 ["verify", root, keys / "rsa.pub", manifest, tmp_path / "nosig"],
                 ["snapshot", tmp_path / "noroot", keys / "rsa.key", tmp_path / "out"]):
        res = run(*args)
        assert res.returncode == 2, args
        assert res.stdout == ""


def test_large_tree(tmp_path, keys):
    root = tmp_path / "root"
    for i in range(1500):
        write(root / f"d{i % 30:02d}" / f"f{i:04d}.dat", f"payload {i}\n".encode() * 20)
    manifest, sig = snapshot(tmp_path, keys, root)
    assert len(manifest.read_text().splitlines()) == 1 + 30 + 1500
    (root / "d07" / "f0007.dat").write_bytes(b"changed")
    os.remove(root / "d29" / "f1499.dat")
    code, lines = verify(root, keys / "rsa.pub", manifest, sig)
    assert code == 1
    assert lines == ["CONTENT d07/f0007.dat", "REMOVED d29/f1499.dat", "changes: 2"]


def test_directory_replaced_by_link(tmp_path, keys):
    root = tmp_path / "root"
    write(root / "assets/a.js", b"a")
    write(root / "assets/b.js", b"b")
    write(root / "z.txt", b"z")
    manifest, sig = snapshot(tmp_path, keys, root)
    for name in ("a.js", "b.js"):
        os.remove(root / "assets" / name)
    (root / "assets").rmdir()
    os.symlink("/tmp", root / "assets")
    code, lines = verify(root, keys / "rsa.pub", manifest, sig)
    assert code == 1
    assert lines == ["TYPE assets d -> l", "REMOVED assets/a.js", "REMOVED assets/b.js", "changes: 3"]


def test_snapshot_leaves_tree_untouched_and_overwrites_outputs(tmp_path, keys):
    root = build_tree(tmp_path / "root")
    before = reference_manifest(root)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "manifest.txt").write_text("stale\n")
    (out_dir / "manifest.sig").write_bytes(b"stale")
    manifest, sig = snapshot(tmp_path, keys, root)
    assert reference_manifest(root) == before
    assert manifest.read_text(encoding="ascii") == before
    code, lines = verify(root, keys / "rsa.pub", manifest, sig)
    assert (code, lines) == (0, ["changes: 0"])
