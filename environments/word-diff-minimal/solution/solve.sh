#!/usr/bin/env bash
set -euo pipefail
cat > /app/wdiff <<'PY'
#!/usr/bin/env python3
"""Minimal word-level diff (longest common subsequence via Myers' O(ND) algorithm)."""
import sys

USAGE = "usage: wdiff [--ignore-case] [--stat] OLD NEW"


def myers_pairs(a, b):
    """Matched index pairs of one longest common subsequence of a and b."""
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return []
    off = n + m + 1
    v = [0] * (2 * off + 1)
    trace = []
    for d in range(n + m + 1):
        trace.append(v[off - d - 1:off + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[off + k] = x
            if x >= n and y >= m:
                return backtrack(trace, d, n, m)
    raise AssertionError("unreachable")


def backtrack(trace, dmax, n, m):
    pairs = []
    x, y = n, m
    for d in range(dmax, 0, -1):
        snap = trace[d]  # v before step d; snap[k + d + 1] is v[k]
        k = x - y
        if k == -d or (k != d and snap[k - 1 + d + 1] < snap[k + 1 + d + 1]):
            pk = k + 1
        else:
            pk = k - 1
        px = snap[pk + d + 1]
        py = px - pk
        mx, my = (px, py + 1) if pk == k + 1 else (px + 1, py)
        while x > mx and y > my:
            pairs.append((x - 1, y - 1))
            x -= 1
            y -= 1
        x, y = px, py
    while x > 0 and y > 0:
        pairs.append((x - 1, y - 1))
        x -= 1
        y -= 1
    pairs.reverse()
    return pairs


def lcs_pairs(a, b):
    # common prefix and suffix
    pre = 0
    while pre < len(a) and pre < len(b) and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < len(a) - pre and suf < len(b) - pre and a[-1 - suf] == b[-1 - suf]:
        suf += 1
    mid_a = a[pre:len(a) - suf]
    mid_b = b[pre:len(b) - suf]
    # tokens absent from the other side can never match: drop them first
    in_b, in_a = set(mid_b), set(mid_a)
    ia = [i for i, t in enumerate(mid_a) if t in in_b]
    ib = [j for j, t in enumerate(mid_b) if t in in_a]
    core = myers_pairs([mid_a[i] for i in ia], [mid_b[j] for j in ib])
    pairs = [(i, i) for i in range(pre)]
    pairs += [(pre + ia[i], pre + ib[j]) for i, j in core]
    pairs += [(len(a) - suf + t, len(b) - suf + t) for t in range(suf)]
    return pairs


def main(argv):
    args = argv[1:]
    ignore_case = stat = False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--ignore-case":
            ignore_case = True
        elif opt == "--stat":
            stat = True
        else:
            print(f"wdiff: unknown option {opt}\n{USAGE}", file=sys.stderr)
            return 2
    if len(args) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    words = []
    for path in args:
        try:
            with open(path, "rb") as fh:
                words.append(fh.read().split())
        except OSError as exc:
            print(f"wdiff: {path}: {exc.strerror}", file=sys.stderr)
            return 2
    old, new = words
    key_old = [w.lower() for w in old] if ignore_case else old
    key_new = [w.lower() for w in new] if ignore_case else new
    pairs = lcs_pairs(key_old, key_new)
    deleted = len(old) - len(pairs)
    inserted = len(new) - len(pairs)
    if stat:
        print(f"unchanged={len(pairs)} deleted={deleted} inserted={inserted}")
    else:
        items = []
        i = j = 0
        for pi, pj in pairs + [(len(old), len(new))]:
            if pi > i:
                items.append(b"[-" + b" ".join(old[i:pi]) + b"-]")
            if pj > j:
                items.append(b"{+" + b" ".join(new[j:pj]) + b"+}")
            if pj < len(new):
                items.append(new[pj])
            i, j = pi + 1, pj + 1
        if items:
            sys.stdout.buffer.write(b" ".join(items) + b"\n")
    return 0 if deleted == 0 and inserted == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/wdiff
