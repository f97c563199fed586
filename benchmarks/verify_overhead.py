"""Overhead of `termgrade verify` per container run, with a warm image cache; with
``--baseline REF``, the same figure for the grader at git revision REF, measured in turn
with this one, task by task (this machine's speed drifts over minutes).

overhead of a run = its wall time (container create .. remove) minus the time solve.sh
and test.sh spend running inside the container (each measured as its exec's wall time,
so the exec round trip itself is counted as task time, not overhead).
Per-task figure: (wall time of verify_task - image build) - in-container time, divided by
the number of runs (repeat oracle runs + 1 nop run). The wall time per run (start to
reward) is printed too: for the same task, its difference between two graders is the
difference of their overheads, whatever each counts as in-container time.

    .venv/bin/python benchmarks/verify_overhead.py [TASK_DIR ...] [--repeat 2] [--tasks 8]
        [--baseline bcf380e] [--rounds 1]
Targets: median overhead under 1.0 s per container run on a 2-core machine; at most
+0.2 s a run over the baseline; ``verify`` of one trivial task with ``--repeat 1`` (oracle
+ nop, image warm) under 2 s start to verdict. Since the runs of a task overlap (two at a
time, the later ones on pairs the warm pool made ahead), "overhead per run" can read
below the per-run cost a sequential grader pays; the wall time is the figure to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def measure(task_dir: Path, repeat: int) -> dict[str, object]:
    """One task verified by the termgrade importable here (the worker's PYTHONPATH)."""
    from termgrade.sandbox.images import build_task_image
    from termgrade.task import load_task
    from termgrade.verify import verify_task

    build_task_image(load_task(task_dir))  # warm the image cache
    started = time.monotonic()
    record = verify_task(task_dir, repeat=repeat)
    wall = time.monotonic() - started
    d = record.durations
    inside = sum(d.get(f"{kind}_{part}", 0.0) for kind in ("oracle", "nop")
                 for part in ("agent", "verify"))
    runs = repeat + 1
    return {"task": record.task_id, "verdict": record.verdict.value, "wall": wall,
            "inside": inside, "overhead": (wall - d.get("build", 0.0) - inside) / runs,
            "per_run": (wall - d.get("build", 0.0)) / runs}


def run_worker(code: Path, task_dir: Path, repeat: int) -> dict[str, object]:
    """``measure`` in a fresh interpreter that imports termgrade from ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code), "TERMGRADE_PROGRESS": "0"}
    done = subprocess.run(
        [sys.executable, __file__, "--worker", str(task_dir.resolve()), "--repeat",
         str(repeat)], env=env, cwd=code, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker for {task_dir} at {code} failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summary(label: str, rows: list[dict[str, object]]) -> None:
    overheads = [float(str(r["overhead"])) for r in rows]
    per_run = [float(str(r["per_run"])) for r in rows]
    walls = [float(str(r["wall"])) for r in rows]
    print(f"{label}: overhead per container run median {statistics.median(overheads):.3f} s, "
          f"p90 {quantile(overheads, 0.9):.3f} s; wall per run (start to reward) median "
          f"{statistics.median(per_run):.3f} s")
    print(f"{label}: verify of one task (image warm), start to verdict: median "
          f"{statistics.median(walls):.2f} s, p90 {quantile(walls, 0.9):.2f} s "
          "(target with --repeat 1, oracle + nop: < 2 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "environments"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=8, help="At most this many tasks.")
    parser.add_argument("--baseline", metavar="REF",
                        help="Also measure the grader at this git revision, in turn.")
    parser.add_argument("--rounds", type=int, default=1,
                        help="Measure every task this many times (per grader).")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args.worker, args.repeat)))
        return

    from termgrade.task import discover_tasks

    task_dirs = discover_tasks(*args.paths)[: args.tasks]
    with tempfile.TemporaryDirectory(prefix="termgrade-baseline-") as scratch:
        graders = {"this": ROOT}
        if args.baseline:
            baseline = Path(scratch) / "baseline"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                            str(baseline), args.baseline], check=True)
            graders[f"baseline {args.baseline}"] = baseline
        rows: dict[str, list[dict[str, object]]] = {label: [] for label in graders}
        try:
            for round_ in range(args.rounds):
                for task_dir in task_dirs:
                    order = list(graders.items())
                    if round_ % 2:
                        order.reverse()
                    for label, code in order:
                        row = run_worker(code, task_dir, args.repeat)
                        rows[label].append(row)
                        print(f"{label:22s} {row['task']!s:40s} {row['verdict']!s:10s} "
                              f"wall {float(str(row['wall'])):7.2f} s  inside "
                              f"{float(str(row['inside'])):6.2f} s  overhead/run "
                              f"{float(str(row['overhead'])):6.3f} s", flush=True)
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(Path(scratch) / "baseline")], check=False)
    print()
    print(f"tasks: {len(task_dirs)}, runs per task: {args.repeat + 1}, rounds: {args.rounds}")
    for label, found in rows.items():
        summary(label, found)
    if args.baseline:
        this, before = list(rows.values())
        for key, name in (("overhead", "overhead"), ("per_run", "wall")):
            paired = [float(str(a[key])) - float(str(b[key]))
                      for a, b in zip(this, before, strict=True)]
            print(f"difference, task by task ({len(paired)} pairs): {name} median "
                  f"{statistics.median(paired):+.3f} s a run, mean "
                  f"{statistics.mean(paired):+.3f} s (budget: at most +0.2 s)")
    print("target: median overhead < 1.0 s")


if __name__ == "__main__":
    main()
