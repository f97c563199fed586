#!/usr/bin/env bash
set -euo pipefail
cat > /app/jflat <<'PY'
#!/usr/bin/env python3
"""Flatten nested JSON into path keys, and back."""
import json
import re
import sys

INDEX = re.compile(r"0|[1-9][0-9]*")


class Bad(Exception):
    pass


def escape(key):
    return key.replace("\\", "\\\\").replace(".", "\\.")


def split_path(path):
    segs, cur, i = [], [], 0
    while i < len(path):
        ch = path[i]
        if ch == "\\" and i + 1 < len(path) and path[i + 1] in "\\.":
            cur.append(path[i + 1])
            i += 2
        elif ch == ".":
            segs.append("".join(cur))
            cur = []
            i += 1
        else:
            cur.append(ch)
            i += 1
    segs.append("".join(cur))
    return segs


def flatten(doc):
    out = {}

    def walk(value, prefix):
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(v, prefix + [escape(k)])
        elif isinstance(value, list) and value:
            for i, v in enumerate(value):
                walk(v, prefix + [str(i)])
        elif prefix:
            out[".".join(prefix)] = value

    if not isinstance(doc, (dict, list)):
        raise Bad("flatten needs a JSON object or array")
    walk(doc, [])
    return out


LEAF = object()


def unflatten(flat):
    if not isinstance(flat, dict):
        raise Bad("unflatten needs a JSON object")
    root = {}
    for path, value in flat.items():
        segs = split_path(path)
        node = root
        for seg in segs[:-1]:
            nxt = node.get(seg)
            if nxt is None:
                nxt = node[seg] = {}
            elif not isinstance(nxt, dict) or LEAF in nxt:
                raise Bad(f"path {path!r} conflicts with another path")
            node = nxt
        last = segs[-1]
        if last in node:
            raise Bad(f"path {path!r} conflicts with another path")
        node[last] = {LEAF: value}
    return rebuild(root)


def rebuild(node):
    if LEAF in node:
        return node[LEAF]
    keys = list(node)
    if keys and all(INDEX.fullmatch(k) for k in keys) and \
            sorted(int(k) for k in keys) == list(range(len(keys))):
        return [rebuild(node[str(i)]) for i in range(len(keys))]
    return {k: rebuild(v) for k, v in node.items()}


def main(argv):
    if len(argv) not in (2, 3) or argv[1] not in ("flatten", "unflatten"):
        print("usage: jflat flatten|unflatten [FILE]", file=sys.stderr)
        return 2
    path = argv[2] if len(argv) == 3 else "-"
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except OSError as exc:
        print(f"jflat: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        doc = json.loads(text)
        result = flatten(doc) if argv[1] == "flatten" else unflatten(doc)
    except (ValueError, Bad) as exc:
        print(f"jflat: {exc}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/jflat
