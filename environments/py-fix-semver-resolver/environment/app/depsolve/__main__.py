"""python3 -m depsolve INDEX.json NAME@CONSTRAINT...: print the resolved versions."""

import json
import sys

from depsolve.resolver import ResolutionError, resolve


def main(argv):
    if len(argv) < 2:
        print("usage: python3 -m depsolve INDEX.json NAME@CONSTRAINT...", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as fh:
            index = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"depsolve: cannot read index {argv[0]}: {exc}", file=sys.stderr)
        return 2
    requirements = []
    for arg in argv[1:]:
        name, sep, constraint = arg.partition("@")
        if not sep or not name or not constraint:
            print(f"depsolve: bad requirement {arg!r} (expected NAME@CONSTRAINT)", file=sys.stderr)
            return 2
        requirements.append((name, constraint))
    try:
        solution = resolve(index, requirements)
    except ValueError as exc:
        print(f"depsolve: {exc}", file=sys.stderr)
        return 2
    except ResolutionError as exc:
        print(f"depsolve: {exc}", file=sys.stderr)
        return 1
    for name in sorted(solution):
        print(f"{name} {solution[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
