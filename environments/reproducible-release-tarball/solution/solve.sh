#!/usr/bin/env bash
set -euo pipefail
cat > /app/mkrelease <<'PYCODE'
#!/usr/bin/python3
"""mkrelease: build a byte-for-byte reproducible release tarball."""
import fnmatch
import gzip
import hashlib
import io
import os
import re
import stat
import sys
import tarfile


def fail(msg):
    print(f"mkrelease: {msg}", file=sys.stderr)
    sys.exit(2)


class Rule:
    def __init__(self, line):
        self.negated = line.startswith("!")
        if self.negated:
            line = line[1:]
        self.dir_only = line.endswith("/")
        line = line.rstrip("/")
        self.anchored = "/" in line
        self.parts = [p for p in line.split("/") if p]

    def matches(self, rel, is_dir):
        if self.dir_only and not is_dir:
            return False
        if not self.anchored:
            return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], self.parts[0])
        parts = rel.split("/")
        return len(parts) == len(self.parts) and all(
            fnmatch.fnmatchcase(a, b) for a, b in zip(parts, self.parts))


def load_rules(src):
    path = os.path.join(src, ".releaseignore")
    if not os.path.isfile(path):
        return []
    rules = []
    for line in open(path, encoding="utf-8").read().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and line not in ("!", "/", "!/"):
            rules.append(Rule(line))
    return rules


def excluded(rules, rel, is_dir):
    state = False
    for rule in rules:
        if rule.matches(rel, is_dir):
            state = not rule.negated
    return state


def walk(src, rules, rel=""):
    here = os.path.join(src, rel) if rel else src
    for name in sorted(os.listdir(here), key=lambda n: n.encode("utf-8", "surrogateescape")):
        relpath = f"{rel}/{name}" if rel else name
        full = os.path.join(src, relpath)
        st = os.lstat(full)
        is_dir = stat.S_ISDIR(st.st_mode)
        if (not rel and name == ".releaseignore") or (is_dir and name == ".git"):
            continue
        if not (is_dir or stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            continue
        if excluded(rules, relpath, is_dir):
            continue
        yield relpath, full, st
        if is_dir:
            yield from walk(src, rules, relpath)


def main(argv):
    if len(argv) != 2:
        fail("usage: mkrelease SRC OUT.tar.gz")
    src, out = argv
    if not out.endswith(".tar.gz") or len(os.path.basename(out)) <= len(".tar.gz"):
        fail(f"output must be NAME.tar.gz: {out}")
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not re.fullmatch(r"[0-9]+", epoch):
        fail("SOURCE_DATE_EPOCH must be set to a non-negative integer")
    epoch = int(epoch)
    if not os.path.isdir(src):
        fail(f"not a directory: {src}")
    prefix = os.path.basename(out)[: -len(".tar.gz")]

    def info(name, kind, mode):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.mtime = kind, mode, epoch
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        return ti

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.addfile(info(prefix, tarfile.DIRTYPE, 0o755))
        for rel, full, st in walk(src, load_rules(src)):
            name = f"{prefix}/{rel}"
            if stat.S_ISDIR(st.st_mode):
                tar.addfile(info(name, tarfile.DIRTYPE, 0o755))
            elif stat.S_ISLNK(st.st_mode):
                ti = info(name, tarfile.SYMTYPE, 0o777)
                ti.linkname = os.readlink(full)
                tar.addfile(ti)
            else:
                ti = info(name, tarfile.REGTYPE, 0o755 if st.st_mode & 0o111 else 0o644)
                with open(full, "rb") as f:
                    data = f.read()
                ti.size = len(data)
                tar.addfile(ti, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, compresslevel=9, mtime=0) as gz:
        gz.write(raw.getvalue())
    data = packed.getvalue()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    for path, content in ((out, data),
                          (out + ".sha256",
                           f"{hashlib.sha256(data).hexdigest()}  {os.path.basename(out)}\n".encode())):
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(content)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
PYCODE
chmod +x /app/mkrelease
SOURCE_DATE_EPOCH=1714521600 /app/mkrelease /app/src/widget /app/dist/widget-1.4.0.tar.gz
