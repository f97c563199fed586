"""Overhead of `termgrade verify` per container run, with a warm image cache.

overhead of a run = its wall time (container create .. remove) minus the time solve.sh
and test.sh spend running inside the container (each measured as its exec's wall time,
so the exec round trip itself is counted as task time, not overhead).
Per-task figure: (wall time of verify_task - image build) - in-container time, divided by
the number of runs (repeat oracle runs + 1 nop run).

    .venv/bin/python benchmarks/verify_overhead.py [TASK_DIR ...] [--repeat 2] [--tasks 8]
Target: median overhead under 1.0 s per container run on a 2-core machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from termgrade.images import build_task_image
from termgrade.task import discover_tasks, load_task
from termgrade.verify import verify_task


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("environments")])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=8, help="At most this many tasks.")
    args = parser.parse_args()

    task_dirs = discover_tasks(*args.paths)[: args.tasks]
    per_run: list[float] = []
    rows = []
    for task_dir in task_dirs:
        build_task_image(load_task(task_dir))  # warm the image cache
        started = time.monotonic()
        record = verify_task(task_dir, repeat=args.repeat)
        wall = time.monotonic() - started
        d = record.durations
        runs = args.repeat + 1
        inside = sum(d.get(f"{kind}_{part}", 0.0) for kind in ("oracle", "nop")
                     for part in ("agent", "verify"))
        overhead = (wall - d.get("build", 0.0) - inside) / runs
        per_run.append(overhead)
        rows.append((record.task_id, record.verdict.value, wall, inside, overhead))

    print(f"{'task':40s} {'verdict':14s} {'wall s':>8s} {'inside s':>9s} {'overhead/run s':>15s}")
    for task_id, verdict, wall, inside, overhead in rows:
        print(f"{task_id:40s} {verdict:14s} {wall:8.2f} {inside:9.2f} {overhead:15.3f}")
    print()
    print(f"tasks: {len(rows)}, runs per task: {args.repeat + 1}")
    print(f"overhead per container run: median {statistics.median(per_run):.3f} s, "
          f"p90 {quantile(per_run, 0.9):.3f} s (target: median < 1.0 s)")
    walls = [wall / (args.repeat + 1) for _, _, wall, _, _ in rows]
    print(f"wall per run (start to reward, test.sh and the broker included): median "
          f"{statistics.median(walls):.3f} s")


if __name__ == "__main__":
    main()
