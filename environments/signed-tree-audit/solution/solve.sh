#!/usr/bin/env bash
set -euo pipefail
cat > /app/treeaudit <<'PY'
#!/usr/bin/env python3
"""Record and audit signed filesystem baselines."""
import hashlib
import os
import re
import stat
import subprocess
import sys
import tempfile

HEADER = "treeaudit-manifest v1"
SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/")
LINE = re.compile(r"^([fdl]) ([0-7]{4}) ([0-9]+) (\S+) (\S+)$")


class Usage(Exception):
    pass


def enc(raw):
    return "".join(chr(b) if b in SAFE else f"%{b:02X}" for b in raw)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def scan(root):
    """Map encoded path -> (type, mode, size, data)."""
    entries = {}

    def rec(dirpath, prefix):
        for name in os.listdir(dirpath):
            full = os.path.join(dirpath, name)
            rel = prefix + name
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                entries[enc(rel)] = ("l", "0777", 0, enc(os.readlink(full)))
            elif stat.S_ISDIR(st.st_mode):
                entries[enc(rel)] = ("d", f"{stat.S_IMODE(st.st_mode):04o}", 0, "-")
                rec(full, rel + b"/")
            elif stat.S_ISREG(st.st_mode):
                entries[enc(rel)] = ("f", f"{stat.S_IMODE(st.st_mode):04o}", st.st_size,
                                     sha256(full))

    rec(os.fsencode(root), b"")
    return entries


def render(entries):
    lines = [HEADER]
    for path in sorted(entries):
        kind, mode, size, data = entries[path]
        lines.append(f"{kind} {mode} {size} {data} {path}")
    return "\n".join(lines) + "\n"


def parse(text):
    lines = text.split("\n")
    if not lines or lines[0] != HEADER or lines[-1] != "":
        raise Usage("malformed manifest (header or final newline)")
    entries = {}
    for num, line in enumerate(lines[1:-1], 2):
        m = LINE.match(line)
        if not m:
            raise Usage(f"malformed manifest line {num}")
        kind, mode, size, data, path = m.groups()
        if kind == "f" and not re.fullmatch(r"[0-9a-f]{64}", data):
            raise Usage(f"malformed manifest line {num}")
        if kind == "d" and data != "-":
            raise Usage(f"malformed manifest line {num}")
        entries[path] = (kind, mode, int(size), data)
    return entries


def need(*paths):
    for p in paths:
        if not os.path.exists(p):
            raise Usage(f"no such file or directory: {p}")


def snapshot(args):
    if len(args) != 3:
        raise Usage("usage: treeaudit snapshot ROOT PRIVKEY OUTDIR")
    root, key, outdir = args
    need(root, key, outdir)
    if not os.path.isdir(root) or not os.path.isdir(outdir):
        raise Usage("ROOT and OUTDIR must be directories")
    text = render(scan(root))
    manifest = os.path.join(outdir, "manifest.txt")
    sig = os.path.join(outdir, "manifest.sig")
    fd, tmp = tempfile.mkstemp(dir=outdir, prefix=".manifest-")
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, manifest)
    done = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key, "-out", sig, manifest],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise Usage(f"openssl could not sign: {done.stderr.strip()}")
    return 0


def verify(args):
    if len(args) != 4:
        raise Usage("usage: treeaudit verify ROOT PUBKEY MANIFEST SIG")
    root, pub, manifest, sig = args
    need(root, pub, manifest, sig)
    done = subprocess.run(["openssl", "dgst", "-sha256", "-verify", pub, "-signature", sig,
                           manifest], capture_output=True, text=True)
    if done.returncode != 0 or "Verified OK" not in done.stdout:
        print("SIGNATURE INVALID")
        return 3
    with open(manifest, encoding="ascii", errors="replace") as fh:
        old = parse(fh.read())
    new = scan(root)
    out = []
    for path in sorted(set(old) | set(new)):
        if path not in new:
            out.append(f"REMOVED {path}")
        elif path not in old:
            out.append(f"ADDED {path}")
        else:
            (ok, om, osz, od), (nk, nm, nsz, nd) = old[path], new[path]
            if ok != nk:
                out.append(f"TYPE {path} {ok} -> {nk}")
                continue
            if ok == "f" and (osz != nsz or od != nd):
                out.append(f"CONTENT {path}")
            if ok == "l" and od != nd:
                out.append(f"TARGET {path}")
            if ok != "l" and om != nm:
                out.append(f"MODE {path} {om} -> {nm}")
    out.append(f"changes: {len(out)}")
    print("\n".join(out))
    return 0 if len(out) == 1 else 1


def main(argv):
    commands = {"snapshot": snapshot, "verify": verify}
    try:
        if len(argv) < 2 or argv[1] not in commands:
            raise Usage("usage: treeaudit snapshot|verify ...")
        return commands[argv[1]](argv[2:])
    except Usage as exc:
        print(f"treeaudit: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/treeaudit
