"""How fast the CLI answers: wall time of `termgrade --help`, `verify --help`, `run --help`.

Each is a fresh process running the console script's entry point, best of N. With --pythonpath DIR
the same commands run against another checkout (say, a worktree of an older commit), so
before and after print side by side.

    .venv/bin/python benchmarks/cli_startup.py [--repeat 3] [--pythonpath /path/to/old/checkout]
Target: `termgrade --help` under 1.0 s (best of 3).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

COMMANDS = (["--help"], ["verify", "--help"], ["run", "--help"], ["validate", "--help"])


def best_wall(args: list[str], repeat: int, pythonpath: str | None) -> float:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        # From a neutral directory: `python -c` puts the working directory first on sys.path.
        subprocess.run([sys.executable, "-c", "from termgrade.cli import main; main()", *args],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd=tempfile.gettempdir())
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pythonpath", help="Also time this checkout (before).")
    args = parser.parse_args()
    header = f"{'command':28s} {'this checkout':>14s}"
    if args.pythonpath:
        header += f" {'--pythonpath':>14s}"
    print(header)
    for command in COMMANDS:
        name = "termgrade " + " ".join(command)
        row = f"{name:28s} {best_wall(command, args.repeat, None):13.2f}s"
        if args.pythonpath:
            row += f" {best_wall(command, args.repeat, args.pythonpath):13.2f}s"
        print(row)
    print(f"(best of {args.repeat}; target: termgrade --help under 1.0 s)")


if __name__ == "__main__":
    main()
