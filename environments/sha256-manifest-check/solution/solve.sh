#!/usr/bin/env bash
set -euo pipefail
cat > /app/checkmanifest <<'PY'
#!/usr/bin/env python3
"""Verify a sha256sum-style manifest and report extra files."""
import hashlib
import os
import re
import sys

ENTRY = re.compile(r"^([0-9a-fA-F]{64}) ([ *])(.+)$")


def unescape(path):
    out, i = [], 0
    while i < len(path):
        if path[i] == "\\" and i + 1 < len(path) and path[i + 1] in "\\n":
            out.append("\\" if path[i + 1] == "\\" else "\n")
            i += 2
        else:
            out.append(path[i])
            i += 1
    return "".join(out)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(argv):
    args = argv[1:]
    strict = False
    if args[:1] == ["--strict"]:
        strict, args = True, args[1:]
    if len(args) != 1:
        print("usage: checkmanifest [--strict] MANIFEST", file=sys.stderr)
        return 2
    manifest = args[0]
    try:
        with open(manifest, "rb") as fh:
            text = fh.read().decode("utf-8", errors="surrogateescape")
    except OSError as exc:
        print(f"checkmanifest: cannot read {manifest}: {exc.strerror}", file=sys.stderr)
        return 2
    base = os.path.dirname(os.path.abspath(manifest))
    counts = dict(ok=0, failed=0, missing=0, malformed=0, extra=0)
    out, referenced = [], set()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for num, line in enumerate(lines, 1):
        if line == "" or line.startswith("#"):
            continue
        escaped = line.startswith("\\")
        m = ENTRY.match(line[1:] if escaped else line)
        if not m:
            out.append(f"MALFORMED {num}")
            counts["malformed"] += 1
            continue
        shown = m.group(3)
        rel = unescape(shown) if escaped else shown
        full = os.path.join(base, rel)
        referenced.add(os.path.normpath(full))
        if not os.path.isfile(full):
            out.append(f"MISSING {shown}")
            counts["missing"] += 1
        elif sha256(full) == m.group(1).lower():
            out.append(f"OK {shown}")
            counts["ok"] += 1
        else:
            out.append(f"FAILED {shown}")
            counts["failed"] += 1
    if strict:
        me = os.path.normpath(os.path.abspath(manifest))
        extras = []
        for root, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
            for name in files:
                full = os.path.join(root, name)
                if os.path.islink(full) or not os.path.isfile(full):
                    continue
                norm = os.path.normpath(full)
                if norm != me and norm not in referenced:
                    extras.append(os.path.relpath(full, base))
        for rel in sorted(extras, key=lambda p: p.encode("utf-8", "surrogateescape")):
            out.append(f"EXTRA {rel}")
            counts["extra"] += 1
    out.append(" ".join(f"{k}={v}" for k, v in counts.items()))
    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("utf-8", "surrogateescape"))
    return 0 if sum(v for k, v in counts.items() if k != "ok") == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/checkmanifest
