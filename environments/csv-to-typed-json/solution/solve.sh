#!/usr/bin/env bash
set -euo pipefail
cat > /app/csv2json <<'PY'
#!/usr/bin/env python3
"""Convert a CSV file into a JSON array with inferred column types."""
import json
import re
import sys

INT = re.compile(r"-?(0|[1-9][0-9]*)")
FLOAT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")


class Malformed(Exception):
    pass


def records(text, delim):
    rows, row, field = [], [], []
    i, n = 0, len(text)
    at_start = True  # at the start of a field
    while i < n:
        ch = text[i]
        if at_start and ch == '"':
            i += 1
            while True:
                if i >= n:
                    raise Malformed("unterminated quoted field")
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        field.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                field.append(text[i])
                i += 1
            at_start = False
            continue
        if ch == delim:
            row.append("".join(field))
            field, at_start = [], True
            i += 1
        elif ch == "\n" or (ch == "\r" and text.startswith("\r\n", i)):
            row.append("".join(field))
            if row != [""]:
                rows.append(row)
            row, field, at_start = [], [], True
            i += 2 if ch == "\r" else 1
        else:
            field.append(ch)
            at_start = False
            i += 1
    if field or row or not at_start:
        row.append("".join(field))
        if row != [""]:
            rows.append(row)
    return rows


def column_type(values):
    vals = [v for v in values if v != ""]
    if not vals:
        return "string"
    if all(INT.fullmatch(v) for v in vals):
        return "integer"
    if all(FLOAT.fullmatch(v) for v in vals):
        return "float"
    if all(v.lower() in ("true", "false") for v in vals):
        return "boolean"
    return "string"


def convert(value, kind):
    if value == "":
        return None
    if kind == "integer":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "boolean":
        return value.lower() == "true"
    return value


def main(argv):
    args = argv[1:]
    delim = ","
    if args[:1] == ["-d"]:
        if len(args) < 2 or len(args[1]) != 1:
            print("csv2json: -d needs exactly one character", file=sys.stderr)
            return 2
        delim, args = args[1], args[2:]
    if len(args) != 1:
        print("usage: csv2json [-d DELIM] FILE", file=sys.stderr)
        return 2
    try:
        with open(args[0], "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        print(f"csv2json: cannot read {args[0]}: {exc.strerror}", file=sys.stderr)
        return 2
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        rows = records(text, delim)
        if not rows:
            raise Malformed("no header record")
        header = rows[0]
        if len(set(header)) != len(header):
            raise Malformed("duplicate column name")
        for num, row in enumerate(rows[1:], 2):
            if len(row) > len(header):
                raise Malformed(f"record {num} has {len(row)} fields, header has {len(header)}")
    except Malformed as exc:
        print(f"csv2json: {args[0]}: {exc}", file=sys.stderr)
        return 1
    data = [row + [""] * (len(header) - len(row)) for row in rows[1:]]
    kinds = [column_type([row[c] for row in data]) for c in range(len(header))]
    out = [{name: convert(row[c], kinds[c]) for c, name in enumerate(header)} for row in data]
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/csv2json
