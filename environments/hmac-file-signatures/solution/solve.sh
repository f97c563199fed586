#!/usr/bin/env bash
set -euo pipefail
cat > /app/sigtool <<'PY'
#!/usr/bin/env python3
"""Sign and verify files with HMAC-SHA256."""
import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
import sys

SIG = re.compile(r"^v1 sha256 ([0-9a-f]{8}) ([0-9a-f]{64})$")


class Usage(Exception):
    pass


def load_key(path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise Usage(f"cannot read key file {path}: {exc}")
    try:
        if text.startswith("hex:") and re.fullmatch(r"[0-9a-fA-F]*", text[4:]):
            key = bytes.fromhex(text[4:])
        elif text.startswith("base64:"):
            key = base64.b64decode(text[7:], validate=True)
        else:
            raise ValueError("unknown key encoding")
    except (ValueError, binascii.Error) as exc:
        raise Usage(f"invalid key file {path}: {exc}")
    if len(key) < 16:
        raise Usage(f"key in {path} is shorter than 16 bytes")
    return key


def key_id(key):
    return hashlib.sha256(key).hexdigest()[:8]


def mac(key, path):
    with open(path, "rb") as fh:
        data = fh.read()
    msg = b"sigtool-v1\n" + os.path.basename(path).encode("utf-8", "surrogateescape") + \
        b"\n" + str(len(data)).encode() + b"\n" + data
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def check(key, path):
    if not os.path.isfile(path):
        return "missing file"
    sig_path = path + ".sig"
    if not os.path.isfile(sig_path):
        return "missing signature"
    with open(sig_path, "rb") as fh:
        raw = fh.read()
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    m = SIG.match(raw.decode("ascii", errors="replace")) if b"\n" not in raw else None
    if not m:
        return "malformed signature"
    if m.group(1) != key_id(key):
        return "wrong key"
    if not hmac.compare_digest(m.group(2), mac(key, path)):
        return "mismatch"
    return None


def line(name, reason):
    return f"{name}: OK" if reason is None else f"{name}: BAD ({reason})"


def keygen(args):
    if len(args) != 1:
        raise Usage("usage: sigtool keygen KEYFILE")
    try:
        fd = os.open(args[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        print(f"sigtool: {args[0]} already exists", file=sys.stderr)
        return 1
    with os.fdopen(fd, "w") as fh:
        fh.write("hex:" + secrets.token_hex(32) + "\n")
    os.chmod(args[0], 0o600)
    return 0


def sign(args):
    if len(args) < 2:
        raise Usage("usage: sigtool sign KEYFILE FILE...")
    key = load_key(args[0])
    for path in args[1:]:
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            raise Usage(f"not a readable regular file: {path}")
    for path in args[1:]:
        text = f"v1 sha256 {key_id(key)} {mac(key, path)}\n"
        tmp = path + ".sig.tmp"
        with open(tmp, "w") as fh:
            fh.write(text)
        os.replace(tmp, path + ".sig")
    return 0


def verify(args):
    if len(args) < 2:
        raise Usage("usage: sigtool verify KEYFILE FILE...")
    key = load_key(args[0])
    results = [check(key, p) for p in args[1:]]
    print("\n".join(line(p, r) for p, r in zip(args[1:], results)))
    return 0 if all(r is None for r in results) else 1


def verify_dir(args):
    if len(args) != 2:
        raise Usage("usage: sigtool verify-dir KEYFILE DIR")
    key = load_key(args[0])
    root = args[1]
    if not os.path.isdir(root):
        raise Usage(f"not a directory: {root}")
    rows = []
    for base, _dirs, files in os.walk(root):
        for name in files:
            full = os.path.join(base, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if not os.path.isfile(full):
                continue
            if name.endswith(".sig"):
                if not os.path.exists(full[:-4]):
                    rows.append((rel, "orphan signature"))
                continue
            rows.append((rel, check(key, full)))
    rows.sort(key=lambda r: r[0].encode("utf-8", "surrogateescape"))
    if rows:
        print("\n".join(line(p, r) for p, r in rows))
    return 0 if all(r is None for _, r in rows) else 1


def main(argv):
    commands = {"keygen": keygen, "sign": sign, "verify": verify, "verify-dir": verify_dir}
    try:
        if len(argv) < 2 or argv[1] not in commands:
            raise Usage("usage: sigtool keygen|sign|verify|verify-dir ...")
        return commands[argv[1]](argv[2:])
    except Usage as exc:
        print(f"sigtool: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/sigtool
