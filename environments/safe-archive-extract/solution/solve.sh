#!/usr/bin/env bash
set -euo pipefail
cat > /app/safe-extract <<'PYCODE'
#!/usr/bin/python3
"""safe-extract: extract matching members of a tar or zip archive, refusing unsafe ones."""
import bz2
import fnmatch
import gzip
import io
import lzma
import os
import posixpath
import stat
import subprocess
import sys
import tarfile
import zipfile


class Member:
    def __init__(self, raw, kind, mode=0o644, mtime=None, link="", reader=None):
        self.raw, self.kind, self.mode, self.mtime, self.link, self.reader = raw, kind, mode, mtime, link, reader
        name = raw
        while name.startswith("./"):
            name = name[2:]
        self.name = name.rstrip("/")


def fail(msg):
    print(f"safe-extract: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        data = open(path, "rb").read()
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return zip_members(data)
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        elif data[:3] == b"BZh":
            data = bz2.decompress(data)
        elif data[:6] == b"\xfd7zXZ\x00":
            data = lzma.decompress(data)
        elif data[:4] == b"\x28\xb5\x2f\xfd":
            out = subprocess.run(["zstd", "-dcq"], input=data, capture_output=True)
            if out.returncode != 0:
                raise ValueError("bad zstd data")
            data = out.stdout
    except (OSError, EOFError, ValueError, lzma.LZMAError):
        fail(f"{path}: damaged compressed data")
    if len(data) < 512 or data[257:262] != b"ustar":
        fail(f"{path}: not a tar or zip archive")
    return tar_members(data)


def tar_members(data):
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
        infos = tar.getmembers()
    except tarfile.TarError as exc:
        fail(f"unreadable tar archive: {exc}")
    out = []
    for info in infos:
        if info.isreg():
            out.append(Member(info.name, "file", info.mode, info.mtime,
                              reader=lambda i=info: tar.extractfile(i).read()))
        elif info.isdir():
            out.append(Member(info.name, "dir", info.mode, info.mtime))
        elif info.issym():
            out.append(Member(info.name, "symlink", link=info.linkname))
        elif info.islnk():
            out.append(Member(info.name, "hardlink", link=info.linkname))
        else:
            out.append(Member(info.name, "special"))
    return out


def zip_members(data):
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        fail(f"unreadable zip archive: {exc}")
    out = []
    for info in infos:
        mode = (info.external_attr >> 16) & 0o7777 if info.create_system == 3 else 0
        if info.filename.endswith("/"):
            out.append(Member(info.filename, "dir", mode or 0o755))
        else:
            out.append(Member(info.filename, "file", mode or 0o644,
                              reader=lambda i=info: zf.read(i)))
    return out


def reason(m, dest, extracted, links):
    if m.raw.startswith("/"):
        return "absolute path"
    parts = m.name.split("/")
    if ".." in parts:
        return "parent reference"
    if m.kind == "special":
        return "special file"
    if m.kind == "symlink":
        if m.link.startswith("/"):
            return "unsafe link"
        target = posixpath.normpath(posixpath.join(posixpath.dirname(m.name), m.link))
        if target == ".." or target.startswith("../"):
            return "unsafe link"
    if m.kind == "hardlink":
        target = Member(m.link, "file").name
        if m.link.startswith("/") or ".." in target.split("/") or target not in extracted:
            return "unsafe link"
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if prefix in links or os.path.islink(os.path.join(dest, prefix)):
            return "unsafe path"
    return None


def extract(m, dest, extracted):
    path = os.path.join(dest, m.name)
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    if m.kind == "dir":
        os.makedirs(path, exist_ok=True)
        return
    if os.path.lexists(path) and not os.path.isdir(path):
        os.unlink(path)
    if m.kind == "symlink":
        os.symlink(m.link, path)
        return
    data = m.reader() if m.kind == "file" else open(os.path.join(dest, extracted[Member(m.link, "file").name]), "rb").read()
    mode = m.mode if m.kind == "file" else extracted_modes[Member(m.link, "file").name]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, mode & 0o777)
    if m.mtime is not None:
        os.utime(path, (m.mtime, m.mtime))


extracted_modes = {}


def main(argv):
    list_only = False
    if argv and argv[0] == "-l":
        list_only, argv = True, argv[1:]
    if len(argv) < 2 or argv[0].startswith("-"):
        fail("usage: safe-extract [-l] ARCHIVE DEST [PATTERN...]")
    archive, dest, patterns = argv[0], argv[1], argv[2:]
    if not os.path.isfile(archive):
        fail(f"no such archive: {archive}")
    members = load(archive)
    if os.path.lexists(dest) and not os.path.isdir(dest):
        fail(f"not a directory: {dest}")
    if not list_only:
        os.makedirs(dest, exist_ok=True)
    extracted, links, rejected = {}, set(), 0
    for m in members:
        if not m.name and not m.raw.startswith("/"):
            continue
        if patterns and not any(fnmatch.fnmatchcase(m.name, p) for p in patterns):
            continue
        why = reason(m, dest, extracted, links)
        if why:
            print(f"rejected: {m.raw} ({why})", file=sys.stderr)
            rejected += 1
            continue
        if not list_only:
            extract(m, dest, extracted)
        if m.kind == "symlink":
            links.add(m.name)
        if m.kind in ("file", "hardlink"):
            extracted[m.name] = m.name
            extracted_modes[m.name] = (m.mode if m.kind == "file"
                                       else extracted_modes[Member(m.link, "file").name])
        print(m.name)
    return 3 if rejected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
PYCODE
chmod +x /app/safe-extract
