#!/usr/bin/env bash
set -euo pipefail
cat > /app/logstats <<'PY'
#!/usr/bin/env python3
"""Summarise nginx combined-format access logs as JSON."""
import gzip
import json
import re
import sys
from collections import Counter

LINE = re.compile(
    r'^(\S+) \S+ \S+ \[[^\]]*\] "([^"]*)" (\d{3}) (\d+|-) "[^"]*" "[^"]*"$'
)


def fail(msg):
    print(f"logstats: {msg}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    args = argv[1:]
    top = 5
    if args[:1] == ["--top"]:
        if len(args) < 2 or not re.fullmatch(r"[0-9]+", args[1]) or int(args[1]) == 0:
            fail("--top needs a positive integer")
        top, args = int(args[1]), args[2:]
    if not args:
        fail("usage: logstats [--top N] FILE [FILE ...]")
    texts = []
    for path in args:
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rb") as fh:
                texts.append(fh.read().decode("utf-8", errors="replace"))
        except OSError as exc:
            fail(f"cannot read {path}: {exc}")
    requests = malformed = size_total = 0
    status = {f"{d}xx": 0 for d in "12345"}
    ips, paths = Counter(), Counter()
    for text in texts:
        for line in text.split("\n"):
            if line == "":
                continue
            m = LINE.match(line)
            if not m or m.group(3)[0] not in "12345":
                malformed += 1
                continue
            ip, request, code, size = m.groups()
            requests += 1
            ips[ip] += 1
            status[code[0] + "xx"] += 1
            size_total += 0 if size == "-" else int(size)
            parts = request.split(" ")
            if len(parts) == 3:
                paths[parts[1].split("?", 1)[0]] += 1

    def ranked(counter, key):
        items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return [{key: k, "count": v} for k, v in items]

    errors = status["4xx"] + status["5xx"]
    report = {
        "requests": requests,
        "malformed": malformed,
        "unique_ips": len(ips),
        "bytes": size_total,
        "status": status,
        "top_paths": ranked(paths, "path"),
        "top_ips": ranked(ips, "ip"),
        "error_rate": round(errors / requests, 4) if requests else 0,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/logstats
