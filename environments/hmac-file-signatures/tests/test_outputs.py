import base64
import hashlib
import hmac
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/sigtool"
KEY = bytes.fromhex("00112233445566778899aabbccddeeff0123456789abcdef")


def run(*args, cwd=None):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def keyfile(tmp_path, key=KEY, name="k.key", fmt="hex"):
    path = tmp_path / name
    text = "hex:" + key.hex() if fmt == "hex" else "base64:" + base64.b64encode(key).decode()
    path.write_text(text + "\n")
    return str(path)


def expected_sig(key, name, data):
    msg = b"sigtool-v1\n" + name.encode() + b"\n" + str(len(data)).encode() + b"\n" + data
    kid = hashlib.sha256(key).hexdigest()[:8]
    return f"v1 sha256 {kid} {hmac.new(key, msg, hashlib.sha256).hexdigest()}\n"


def make(tmp_path, name, data):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_verify_dir():
    out = run("verify-dir", "/app/keys/release.key", "/app/artifacts")
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "app-1.4.2.tar.gz: OK",
        "app-1.4.2.tar.gz.manifest: OK",
        "docs/NOTES.txt: BAD (missing signature)",
        "docs/README.md: BAD (mismatch)",
        "empty.dat: BAD (wrong key)",
        "install.sh: BAD (mismatch)",
        "old-1.4.1.tar.gz.sig: BAD (orphan signature)",
    ]


def test_sample_verify_files_as_given():
    out = run("verify", "/app/keys/release.key", "install.sh", "./app-1.4.2.tar.gz", "nope.bin", cwd="/app/artifacts")
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "install.sh: BAD (mismatch)",
        "./app-1.4.2.tar.gz: OK",
        "nope.bin: BAD (missing file)",
    ]


def test_sign_writes_exact_signature(tmp_path):
    k = keyfile(tmp_path)
    f = make(tmp_path, "report.pdf", b"%PDF-1.7 fake\n\x00\xff")
    out = run("sign", k, f)
    assert out.returncode == 0, out.stderr
    assert Path(f + ".sig").read_text() == expected_sig(KEY, "report.pdf", b"%PDF-1.7 fake\n\x00\xff")


def test_sign_then_verify_ok(tmp_path):
    k = keyfile(tmp_path)
    files = [make(tmp_path, n, n.encode() * 3) for n in ("a.txt", "b.txt")]
    assert run("sign", k, *files).returncode == 0
    out = run("verify", k, *files)
    assert out.returncode == 0
    assert out.stdout.splitlines() == [f"{files[0]}: OK", f"{files[1]}: OK"]


def test_signature_bound_to_file_name(tmp_path):
    k = keyfile(tmp_path)
    a = make(tmp_path, "good.bin", b"same bytes")
    b = make(tmp_path, "evil.bin", b"same bytes")
    run("sign", k, a)
    shutil.copy(a + ".sig", b + ".sig")
    out = run("verify", k, b)
    assert out.returncode == 1
    assert out.stdout.strip() == f"{b}: BAD (mismatch)"


def test_tampered_content_detected(tmp_path):
    k = keyfile(tmp_path)
    f = make(tmp_path, "data.bin", b"A" * 1000)
    run("sign", k, f)
    Path(f).write_bytes(b"A" * 999 + b"B")
    assert run("verify", k, f).stdout.strip() == f"{f}: BAD (mismatch)"
    Path(f).write_bytes(b"A" * 1000 + b"\n")
    assert run("verify", k, f).stdout.strip() == f"{f}: BAD (mismatch)"


def test_wrong_key_detected(tmp_path):
    k1 = keyfile(tmp_path)
    k2 = keyfile(tmp_path, key=bytes(range(20)), name="other.key")
    f = make(tmp_path, "x.txt", b"x")
    run("sign", k1, f)
    out = run("verify", k2, f)
    assert out.returncode == 1
    assert out.stdout.strip() == f"{f}: BAD (wrong key)"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda s: s.upper(),
        lambda s: s + "extra line\n",
        lambda s: s.replace("v1 ", "v2 "),
        lambda s: s.replace(" sha256 ", " sha512 "),
        lambda s: s.rstrip("\n") + " \n",
        lambda s: s.replace(" ", "  ", 1),
        lambda s: s[:-3] + "\n",
        lambda s: "",
    ],
    ids=["uppercase", "two-lines", "version", "algorithm", "trailing-space", "double-space", "short-mac", "empty"],
)
def test_malformed_signatures(tmp_path, mutate):
    k = keyfile(tmp_path)
    f = make(tmp_path, "m.txt", b"content")
    run("sign", k, f)
    sig = Path(f + ".sig")
    sig.write_text(mutate(sig.read_text()))
    out = run("verify", k, f)
    assert out.returncode == 1
    assert out.stdout.strip() == f"{f}: BAD (malformed signature)"


def test_signature_without_final_newline_is_fine(tmp_path):
    k = keyfile(tmp_path)
    f = make(tmp_path, "n.txt", b"n")
    Path(f + ".sig").write_text(expected_sig(KEY, "n.txt", b"n").rstrip("\n"))
    assert run("verify", k, f).stdout.strip() == f"{f}: OK"


def test_reason_priority(tmp_path):
    k = keyfile(tmp_path)
    make(tmp_path, "ghost.txt.sig", b"garbage")
    nosig = make(tmp_path, "nosig.txt", b"x")
    out = run("verify", k, str(tmp_path / "ghost.txt"), nosig)
    assert out.stdout.splitlines() == [
        f"{tmp_path / 'ghost.txt'}: BAD (missing file)",
        f"{nosig}: BAD (missing signature)",
    ]


def test_base64_key_and_key_id(tmp_path):
    key = hashlib.sha256(b"seed").digest()
    k = keyfile(tmp_path, key=key, fmt="base64")
    f = make(tmp_path, "b64.txt", b"hello")
    assert run("sign", k, f).returncode == 0
    assert Path(f + ".sig").read_text() == expected_sig(key, "b64.txt", b"hello")
    upper = tmp_path / "upper.key"
    upper.write_text("  hex:" + key.hex().upper() + "  \n\n")
    assert run("verify", str(upper), f).returncode == 0


@pytest.mark.parametrize(
    "content",
    ["hex:00112233445566778899aabbccddee", "hex:0011223344556677889", "hex:zz112233445566778899aabbccddeeff",
     "base64:not*base64!!", "raw-secret-key-material-1234567890", ""],
    ids=["too-short", "odd-length", "bad-hex", "bad-base64", "no-prefix", "empty"],
)
def test_invalid_key_files_exit_2(tmp_path, content):
    kf = tmp_path / "bad.key"
    kf.write_text(content + "\n")
    f = make(tmp_path, "f.txt", b"f")
    for cmd in ("sign", "verify"):
        out = run(cmd, str(kf), f)
        assert out.returncode == 2, cmd
        assert out.stdout == ""
    assert not Path(f + ".sig").exists()


def test_missing_key_file_exit_2(tmp_path):
    f = make(tmp_path, "f.txt", b"f")
    out = run("verify", str(tmp_path / "none.key"), f)
    assert out.returncode == 2 and out.stdout == ""


def test_sign_is_all_or_nothing(tmp_path):
    k = keyfile(tmp_path)
    good = make(tmp_path, "good.txt", b"g")
    out = run("sign", k, good, str(tmp_path / "missing.txt"))
    assert out.returncode == 2
    assert not Path(good + ".sig").exists()
    out = run("sign", k, good, str(tmp_path))
    assert out.returncode == 2
    assert not Path(good + ".sig").exists()


def test_sign_overwrites_old_signature(tmp_path):
    k = keyfile(tmp_path)
    f = make(tmp_path, "o.txt", b"old")
    Path(f + ".sig").write_text("stale\n")
    assert run("sign", k, f).returncode == 0
    assert Path(f + ".sig").read_text() == expected_sig(KEY, "o.txt", b"old")


def test_keygen(tmp_path):
    p1, p2 = tmp_path / "one.key", tmp_path / "two.key"
    assert run("keygen", str(p1)).returncode == 0
    assert run("keygen", str(p2)).returncode == 0
    t1, t2 = p1.read_text(), p2.read_text()
    for t in (t1, t2):
        assert t.startswith("hex:") and t.endswith("\n")
        body = t[4:-1]
        assert len(body) == 64 and body == body.lower() and bytes.fromhex(body)
    assert t1 != t2
    assert stat.S_IMODE(p1.stat().st_mode) == 0o600
    f = make(tmp_path, "k.txt", b"k")
    assert run("sign", str(p1), f).returncode == 0
    assert run("verify", str(p1), f).returncode == 0


def test_keygen_refuses_to_overwrite(tmp_path):
    p = tmp_path / "exists.key"
    p.write_text("hex:" + KEY.hex() + "\n")
    out = run("keygen", str(p))
    assert out.returncode == 1
    assert p.read_text() == "hex:" + KEY.hex() + "\n"


def test_verify_dir_all_ok_and_sorted(tmp_path):
    k = keyfile(tmp_path)
    root = tmp_path / "tree"
    paths = [make(root, rel, rel.encode()) for rel in ("b.txt", "A.txt", "sub/z.bin", "sub/deeper/a b.txt", "ünï.txt")]
    assert run("sign", k, *paths).returncode == 0
    out = run("verify-dir", k, str(root))
    assert out.returncode == 0
    assert out.stdout.splitlines() == [
        "A.txt: OK", "b.txt: OK", "sub/deeper/a b.txt: OK", "sub/z.bin: OK", "ünï.txt: OK",
    ]
    os.remove(paths[0])
    out = run("verify-dir", k, str(root))
    assert out.returncode == 1
    assert "b.txt.sig: BAD (orphan signature)" in out.stdout.splitlines()


def test_empty_and_large_files(tmp_path):
    k = keyfile(tmp_path)
    empty = make(tmp_path, "empty", b"")
    big_data = bytes(range(256)) * 40000
    big = make(tmp_path, "big.img", big_data)
    assert run("sign", k, empty, big).returncode == 0
    assert Path(empty + ".sig").read_text() == expected_sig(KEY, "empty", b"")
    assert Path(big + ".sig").read_text() == expected_sig(KEY, "big.img", big_data)


def test_unknown_command_and_missing_args_exit_2(tmp_path):
    k = keyfile(tmp_path)
    for args in (["frobnicate", k], [], ["sign", k], ["verify"], ["verify-dir", k]):
        out = run(*args)
        assert out.returncode == 2, args
        assert out.stdout == ""
