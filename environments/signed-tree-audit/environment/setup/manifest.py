"""Build-time helper: print the treeaudit manifest of a directory."""
import hashlib
import os
import stat
import sys

SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/")


def enc(raw):
    return "".join(chr(b) if b in SAFE else "%%%02X" % b for b in raw)


def walk(top, prefix, out):
    for name in os.listdir(top):
        full = os.path.join(top, name)
        rel = prefix + name
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            out[enc(rel)] = "l 0777 0 %s" % enc(os.readlink(full))
        elif stat.S_ISDIR(st.st_mode):
            out[enc(rel)] = "d %04o 0 -" % stat.S_IMODE(st.st_mode)
            walk(full, rel + b"/", out)
        elif stat.S_ISREG(st.st_mode):
            with open(full, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            out[enc(rel)] = "f %04o %d %s" % (stat.S_IMODE(st.st_mode), st.st_size, digest)


entries = {}
walk(os.fsencode(sys.argv[1]), b"", entries)
sys.stdout.write("treeaudit-manifest v1\n" + "".join("%s %s\n" % (entries[p], p) for p in sorted(entries)))
