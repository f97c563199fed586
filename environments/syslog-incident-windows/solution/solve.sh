#!/usr/bin/env bash
set -euo pipefail
cat > /app/incidents <<'PY'
#!/usr/bin/env python3
"""Cut merged context windows around matching syslog lines."""
import re
import sys
from datetime import datetime, timedelta

MONTHS = {m: i for i, m in enumerate(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
STAMP = re.compile(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) +(\S+)")


def usage(msg):
    print(f"incidents: {msg}", file=sys.stderr)
    print("usage: incidents --pattern REGEX [--before SEC] [--after SEC] "
          "[--year YYYY] [--host HOST] FILE", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    opts = {"--before": "60", "--after": "30", "--year": "2024"}
    files = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--pattern", "--before", "--after", "--year", "--host"):
            if i + 1 >= len(argv):
                usage(f"{arg} needs a value")
            opts[arg] = argv[i + 1]
            i += 2
        elif arg.startswith("--"):
            usage(f"unknown option {arg}")
        else:
            files.append(arg)
            i += 1
    if "--pattern" not in opts:
        usage("--pattern is required")
    if len(files) != 1:
        usage("exactly one FILE is required")
    for key in ("--before", "--after", "--year"):
        if not re.fullmatch(r"[0-9]+", opts[key]):
            usage(f"{key} must be a non-negative integer")
    try:
        pattern = re.compile(opts["--pattern"])
    except re.error as exc:
        usage(f"invalid regular expression: {exc}")
    return pattern, int(opts["--before"]), int(opts["--after"]), int(opts["--year"]), \
        opts.get("--host"), files[0]


def read_lines(path, year):
    """Yield (line, time, host) for every line that has a time."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        usage(f"cannot read {path}: {exc.strerror}")
    current = None
    prev_month = None
    out = []
    for line in text.split("\n"):
        m = STAMP.match(line)
        if m and m.group(1) in MONTHS:
            month = MONTHS[m.group(1)]
            if prev_month is not None and month < prev_month:
                year += 1
            prev_month = month
            try:
                when = datetime(year, month, int(m.group(2)), int(m.group(3)),
                                int(m.group(4)), int(m.group(5)))
            except ValueError:
                m = None
            else:
                current = (when, m.group(6))
        if current is None:
            continue
        if line == "" and not m:
            continue
        out.append((line, current[0], current[1]))
    return out


def main(argv):
    pattern, before, after, year, host, path = parse_args(argv[1:])
    lines = [entry for entry in read_lines(path, year) if host is None or entry[2] == host]
    windows = []
    for line, when, _ in lines:
        if pattern.search(line):
            start, end = when - timedelta(seconds=before), when + timedelta(seconds=after)
            if windows and start <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], end)
                windows[-1][2] += 1
            else:
                windows.append([start, end, 1])
    blocks = []
    for n, (start, end, triggers) in enumerate(windows, 1):
        body = [line for line, when, _ in lines if start <= when <= end]
        head = (f"== incident {n}: {start:%Y-%m-%dT%H:%M:%S} .. {end:%Y-%m-%dT%H:%M:%S} "
                f"({triggers} triggers, {len(body)} lines)")
        blocks.append("\n".join([head, *body]) + "\n")
    sys.stdout.write("\n".join(blocks))
    return 0 if windows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/incidents
