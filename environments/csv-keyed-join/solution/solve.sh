#!/usr/bin/env bash
set -euo pipefail
cat > /app/csvjoin <<'PY'
#!/usr/bin/env python3
"""SQL-style inner/left/outer join of two CSV files."""
import csv
import sys

USAGE = "usage: csvjoin [--type inner|left|outer] --on KEYS LEFT RIGHT"


class Bad(Exception):
    pass


def usage(msg):
    print(f"csvjoin: {msg}\n{USAGE}", file=sys.stderr)
    sys.exit(2)


def read(path):
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh, strict=True))
    except OSError as exc:
        usage(f"cannot read {path}: {exc.strerror}")
    except csv.Error as exc:
        raise Bad(f"{path}: {exc}")
    if not rows:
        raise Bad(f"{path}: no header")
    header = rows[0]
    for num, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise Bad(f"{path}: record {num} has {len(row)} fields, expected {len(header)}")
    return header, rows[1:]


def cell(value):
    if any(c in value for c in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def main(argv):
    args = argv[1:]
    kind, keys, files = "inner", None, []
    while args:
        arg = args.pop(0)
        if arg in ("--type", "--on"):
            if not args:
                usage(f"{arg} needs a value")
            value = args.pop(0)
            if arg == "--type":
                if value not in ("inner", "left", "outer"):
                    usage(f"bad --type {value}")
                kind = value
            else:
                keys = [k.split("=", 1) if "=" in k else [k, k] for k in value.split(",")]
        elif arg.startswith("--"):
            usage(f"unknown option {arg}")
        else:
            files.append(arg)
    if keys is None:
        usage("--on is required")
    if len(files) != 2:
        usage("need LEFT and RIGHT files")
    try:
        lh, lrows = read(files[0])
        rh, rrows = read(files[1])
        for (lk, rk) in keys:
            if lk not in lh:
                raise Bad(f"{files[0]}: no column {lk!r}")
            if rk not in rh:
                raise Bad(f"{files[1]}: no column {rk!r}")
    except Bad as exc:
        print(f"csvjoin: {exc}", file=sys.stderr)
        return 1
    lki = [lh.index(lk) for lk, _ in keys]
    rki = [rh.index(rk) for _, rk in keys]
    lrest = [i for i in range(len(lh)) if i not in lki]
    rrest = [i for i in range(len(rh)) if i not in rki]
    header = [lh[i] for i in lki] + [lh[i] for i in lrest]
    for i in rrest:
        name = rh[i]
        header.append(name + "_right" if name in header else name)

    def key(row, idx):
        vals = tuple(row[i].strip(" \t") for i in idx)
        return None if any(v == "" for v in vals) else vals

    index = {}
    for pos, row in enumerate(rrows):
        k = key(row, rki)
        if k is not None:
            index.setdefault(k, []).append(pos)
    out = [header]
    matched = set()
    for row in lrows:
        k = key(row, lki)
        hits = index.get(k, []) if k is not None else []
        keyvals = [row[i].strip(" \t") for i in lki]
        for pos in hits:
            matched.add(pos)
            out.append(keyvals + [row[i] for i in lrest] + [rrows[pos][i] for i in rrest])
        if not hits and kind in ("left", "outer"):
            out.append(keyvals + [row[i] for i in lrest] + [""] * len(rrest))
    if kind == "outer":
        for pos, row in enumerate(rrows):
            if pos not in matched:
                out.append([row[i].strip(" \t") for i in rki] + [""] * len(lrest)
                           + [row[i] for i in rrest])
    sys.stdout.write("".join(",".join(cell(v) for v in r) + "\n" for r in out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/csvjoin
