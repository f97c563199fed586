#!/usr/bin/env bash
set -euo pipefail
cat > /app/inimerge <<'PY'
#!/usr/bin/env python3
"""Merge layered INI files into one canonical file."""
import os
import sys
import tempfile


class MergeError(Exception):
    pass


class Config:
    def __init__(self):
        # lowercase section name -> (display name, {lowercase key: value})
        self.sections = {"": ("", {})}

    def section(self, name):
        low = name.lower()
        if low not in self.sections:
            self.sections[low] = (name, {})
        return self.sections[low][1]

    def apply(self, path, text):
        current = ""
        deleted_header = False
        for lineno, raw in enumerate(text.split("\n"), 1):
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                name = line[1:-1].strip()
                if name.startswith("-"):
                    target = name[1:].strip().lower()
                    if target:
                        self.sections.pop(target, None)
                    else:
                        self.sections[""] = ("", {})
                    deleted_header = True
                else:
                    current = name
                    self.section(name)
                    deleted_header = False
                continue
            if line.startswith("-"):
                if deleted_header:
                    raise MergeError(f"inimerge: {path}:{lineno}: syntax error")
                self.section(current).pop(line[1:].strip().lower(), None)
                continue
            if "=" in line:
                if deleted_header:
                    raise MergeError(f"inimerge: {path}:{lineno}: syntax error")
                key, value = line.split("=", 1)
                self.section(current)[key.strip().lower()] = value.strip()
                continue
            raise MergeError(f"inimerge: {path}:{lineno}: syntax error")

    def lookup(self, section, key):
        entry = self.sections.get(section.lower())
        if entry is None or key.lower() not in entry[1]:
            raise MergeError(f"inimerge: undefined reference ${{{section}:{key}}}")
        return entry[1][key.lower()]

    def expand_all(self):
        cache = {}

        def expand(section, key, stack):
            ident = (section.lower(), key.lower())
            if ident in cache:
                return cache[ident]
            if ident in stack:
                raise MergeError(f"inimerge: reference cycle at ${{{section}:{key}}}")
            raw = self.lookup(section, key)
            out = []
            i = 0
            while i < len(raw):
                ch = raw[i]
                if ch == "$" and raw.startswith("$$", i):
                    out.append("$")
                    i += 2
                elif ch == "$" and raw.startswith("${", i) and "}" in raw[i + 2:]:
                    end = raw.index("}", i + 2)
                    ref = raw[i + 2:end]
                    if ":" in ref:
                        sec, name = ref.split(":", 1)
                    else:
                        sec, name = section, ref
                    out.append(expand(sec.strip(), name.strip(), stack | {ident}))
                    i = end + 1
                else:
                    out.append(ch)
                    i += 1
            cache[ident] = "".join(out)
            return cache[ident]

        return {
            low: (display, {k: expand(low, k, frozenset()) for k in keys})
            for low, (display, keys) in self.sections.items()
        }


def render(sections):
    blocks = []
    for low, (display, keys) in sections.items():
        lines = [] if low == "" else [f"[{display}]"]
        lines += [f"{k} = {v}" if v else f"{k} =" for k, v in keys.items()]
        if low == "" and not keys:
            continue
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def main(argv):
    args = argv[1:]
    out_path = None
    if args[:1] == ["-o"]:
        if len(args) < 2:
            print("inimerge: -o needs a path", file=sys.stderr)
            return 2
        out_path, args = args[1], args[2:]
    if not args:
        print("usage: inimerge [-o OUT] FILE [FILE ...]", file=sys.stderr)
        return 2
    config = Config()
    try:
        texts = []
        for path in args:
            try:
                with open(path, encoding="utf-8") as fh:
                    texts.append((path, fh.read()))
            except OSError as exc:
                print(f"inimerge: cannot read {path}: {exc.strerror}", file=sys.stderr)
                return 2
        for path, text in texts:
            config.apply(path, text)
        result = render(config.expand_all())
    except MergeError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if out_path is None:
        sys.stdout.write(result)
        return 0
    directory = os.path.dirname(os.path.abspath(out_path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".inimerge-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(result)
    os.chmod(tmp, 0o644)
    os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/inimerge
