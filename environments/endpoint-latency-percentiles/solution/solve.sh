#!/usr/bin/env bash
set -euo pipefail
cat > /app/latency <<'PY'
#!/usr/bin/env python3
"""Per-endpoint latency percentiles from logfmt request logs."""
import math
import re
import sys
from collections import defaultdict

NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
DUR_MS = re.compile(rf"^{NUMBER}$")
DUR = re.compile(rf"^({NUMBER})(us|µs|ms|s)$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
SCALE = {"us": 0.001, "µs": 0.001, "ms": 1.0, "s": 1000.0}


def pairs(rest):
    out = {}
    i, n = 0, len(rest)
    while i < n:
        while i < n and rest[i] == " ":
            i += 1
        start = i
        while i < n and rest[i] not in " =":
            i += 1
        key = rest[start:i]
        if i >= n or rest[i] != "=":
            continue
        i += 1
        if i < n and rest[i] == '"':
            i += 1
            buf = []
            while i < n and rest[i] != '"':
                if rest[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(rest[i])
                i += 1
            if i >= n:
                return None
            i += 1
            value = "".join(buf)
        else:
            start = i
            while i < n and rest[i] != " ":
                i += 1
            value = rest[start:i]
        if key:
            out[key] = value
    return out


def duration_ms(kv):
    if "duration_ms" in kv:
        return float(kv["duration_ms"]) if DUR_MS.match(kv["duration_ms"]) else None
    m = DUR.match(kv.get("duration", ""))
    return float(m.group(1)) * SCALE[m.group(2)] if m else None


def endpoint(method, path):
    path = path.split("?", 1)[0]
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    segs = ["{id}" if s.isascii() and s.isdigit() else "{uuid}" if UUID.match(s) else s
            for s in path.split("/")]
    return f"{method} {'/'.join(segs)}"


def rank(values, p):
    return values[max(1, math.ceil(p * len(values) / 100)) - 1]


def main(argv):
    args = argv[1:]
    min_count = 1
    if args[:1] == ["--min-count"]:
        if len(args) < 2 or not re.fullmatch(r"[0-9]+", args[1]) or int(args[1]) < 1:
            print("latency: --min-count needs a positive integer", file=sys.stderr)
            return 2
        min_count, args = int(args[1]), args[2:]
    if not args:
        print("usage: latency [--min-count N] FILE [FILE ...]", file=sys.stderr)
        return 2
    texts = []
    for path in args:
        try:
            if path == "-":
                texts.append(sys.stdin.read())
            else:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    texts.append(fh.read())
        except OSError as exc:
            print(f"latency: cannot read {path}: {exc.strerror}", file=sys.stderr)
            return 2
    groups = defaultdict(list)
    for text in texts:
        for line in text.split("\n"):
            parts = line.split(" ", 2)
            if len(parts) < 3:
                continue
            kv = pairs(parts[2])
            if not kv or "method" not in kv or "path" not in kv:
                continue
            ms = duration_ms(kv)
            if ms is None:
                continue
            groups[endpoint(kv["method"], kv["path"])].append(ms)
    rows = []
    for name, values in groups.items():
        if len(values) < min_count:
            continue
        values.sort()
        rows.append((name, len(values), rank(values, 50), rank(values, 90),
                     rank(values, 99), values[-1]))
    rows.sort(key=lambda r: (-r[4], r[0]))
    out = ["endpoint\tcount\tp50\tp90\tp99\tmax"]
    out += [f"{r[0]}\t{r[1]}\t{r[2]:.1f}\t{r[3]:.1f}\t{r[4]:.1f}\t{r[5]:.1f}" for r in rows]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/latency
