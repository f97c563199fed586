#!/usr/bin/env bash
set -euo pipefail
cat > /app/mdtable <<'PY'
#!/usr/bin/env python3
"""Pretty-print GitHub-style pipe tables in a Markdown document."""
import re
import sys

DELIM = re.compile(r"^:?-+:?$")


def cells(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", s)]


def align_of(cell):
    left, right = cell.startswith(":"), cell.endswith(":")
    if left and right:
        return "center"
    if right:
        return "right"
    if left:
        return "left"
    return "none"


def pad(text, width, align):
    gap = width - len(text)
    if align == "right":
        return " " * gap + text
    if align == "center":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap


def delim_cell(width, align):
    if align == "left":
        return ":" + "-" * (width - 1)
    if align == "right":
        return "-" * (width - 1) + ":"
    if align == "center":
        return ":" + "-" * (width - 2) + ":"
    return "-" * width


def render(header, aligns, body):
    n = len(header)
    rows = [header] + [(r + [""] * n)[:n] for r in body]
    widths = [max(3, *(len(r[i]) for r in rows)) for i in range(n)]
    out = ["| " + " | ".join(pad(c, widths[i], aligns[i]) for i, c in enumerate(rows[0])) + " |"]
    out.append("| " + " | ".join(delim_cell(widths[i], aligns[i]) for i in range(n)) + " |")
    for r in rows[1:]:
        out.append("| " + " | ".join(pad(c, widths[i], aligns[i]) for i, c in enumerate(r)) + " |")
    return out


def reformat(text):
    lines = text.split("\n")
    out = []
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_fence = not in_fence
            out.append(line)
            i += 1
            continue
        if not in_fence and "|" in line and i + 1 < len(lines):
            header = cells(line)
            delim = cells(lines[i + 1])
            if len(delim) == len(header) and all(DELIM.match(c) for c in delim):
                j = i + 2
                body = []
                while j < len(lines) and "|" in lines[j]:
                    body.append(cells(lines[j]))
                    j += 1
                out.extend(render(header, [align_of(c) for c in delim], body))
                i = j
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


def main(argv):
    path = argv[1] if len(argv) > 1 else "-"
    if path == "-":
        text = sys.stdin.buffer.read().decode("utf-8")
    else:
        try:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8")
        except OSError as exc:
            print(f"mdtable: cannot read {path}: {exc.strerror}", file=sys.stderr)
            return 2
    sys.stdout.buffer.write(reformat(text).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/mdtable
