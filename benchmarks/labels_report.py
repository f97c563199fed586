"""Benchmark: labels + the full report (figures included) on a release-sized corpus.

Generates 36,144 counted synthetic trials (1,004 tasks x 6 models: k=8 for four, k=2 for
two; plus infrastructure-error retries), writes them as JSONL, then times, each in a fresh
process so imports count as they do for a user:

1. ``termgrade labels``-equivalent: read + validate the trials, compute labels, write them;
2. the full report from the trials: labels again, pass@k, paired tests with bootstrap,
   Jaccard, cost, near-misses, turns, four PNG figures.

Target: labels + report under 10 s on a 2-core machine. Prints the figures.

    .venv/bin/python benchmarks/labels_report.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LABELS = """
import time, warnings, sys
t = time.perf_counter()
cpu = time.process_time()
from pathlib import Path
from termgrade.core.errors import DataWarning
from termgrade.labels import compute_labels, write_labels
from termgrade.trialsets import read_trials
warnings.simplefilter("ignore", DataWarning)
trials = read_trials([Path(sys.argv[1])])
t_read = time.perf_counter() - t
labels = compute_labels(trials)
write_labels(Path(sys.argv[2]), labels)
print(f"{t_read:.3f} {time.perf_counter() - t:.3f} {time.process_time() - cpu:.3f} "
      f"{len(trials.frame)} {len(labels.frame)}")
"""

REPORT = """
import time, warnings, sys
t = time.perf_counter()
cpu = time.process_time()
from pathlib import Path
from termgrade.core.errors import DataWarning
from termgrade.passrates import load_inputs, write_report
warnings.simplefilter("ignore", DataWarning)
inputs = load_inputs([Path(sys.argv[1])])
t_load = time.perf_counter() - t
report, written = write_report(inputs, Path(sys.argv[2]))
print(f"{t_load:.3f} {time.perf_counter() - t:.3f} {time.process_time() - cpu:.3f} "
      f"{len(written)}")
"""


def _run(code: str, *args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, env={**os.environ, "TERMGRADE_PROGRESS": "0"})
    return done.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="Write the corpus and report here (kept).")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.keep)
        return
    with tempfile.TemporaryDirectory(prefix="termgrade-bench-") as work:
        run(Path(work))


def run(work: Path) -> None:
    from termgrade.trialsets import write_trials
    from termgrade.trialsets.synthetic import generate

    trials, labels, out = work / "trials.jsonl", work / "labels.jsonl", work / "report"

    t = time.perf_counter()
    corpus = generate()
    write_trials(trials, corpus.records)
    t_gen = time.perf_counter() - t
    counted = sum(1 for r in corpus.records if r["counted"])
    size_mb = trials.stat().st_size / 1e6
    print(f"corpus: {len(corpus.records):,} trials ({counted:,} counted), {size_mb:.1f} MB, "
          f"generated + written in {t_gen:.1f} s")

    load_before = os.getloadavg()[0]
    read_s, labels_s, labels_cpu, n_trials, n_labels = _run(LABELS, str(trials), str(labels))
    load_s, report_s, report_cpu, n_files = _run(REPORT, str(trials), str(out))
    total = float(labels_s) + float(report_s)
    total_cpu = float(labels_cpu) + float(report_cpu)
    print(f"labels: {float(labels_s):.2f} s wall, {float(labels_cpu):.2f} s CPU ({n_labels} rows "
          f"from {int(n_trials):,} trials; imports + reading + validating {float(read_s):.2f} s)")
    print(f"report: {float(report_s):.2f} s wall, {float(report_cpu):.2f} s CPU ({n_files} files; "
          f"imports + loading + labels {float(load_s):.2f} s, statistics + figures "
          f"{float(report_s) - float(load_s):.2f} s)")
    print(f"labels + report: {total:.2f} s wall, {total_cpu:.2f} s CPU (target < 10 s): "
          f"{'OK' if total < 10 else 'OVER TARGET'}; load average {load_before:.1f} -> "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall time stretches when "
          "other work shares the CPUs; CPU time does not)")

    data = json.loads((out / "report.json").read_text())
    print("\nper model (pass@1, pass@8, median win minutes, trial-hours):")
    cost = {row["config"]: row for row in data["cost"]}
    for c in data["configs"]:
        p8 = c["pass_at_8"]["value"] if c["pass_at_8"] else None
        row = cost[c["config"]]
        print(f"  {c['config']:<20} k={c['k']}  pass@1 {c['pass_at_1']['value']:.4f}  "
              f"pass@8 {'-' if p8 is None else f'{p8:.4f}'}  "
              f"win {row['median_win_minutes']:.1f} min  {row['trial_hours']:,.0f} h")
    j = data["jaccard"]
    print(f"Jaccard of central sets: {j['off_diagonal_min']:.2f} .. {j['off_diagonal_max']:.2f}; "
          f"central for all: {len(j['in_all'])}")
    nm = data["near_misses"]
    print(f"near-misses: {nm['total']:,} ({100 * nm['share']:.1f}% of counted trials)")


if __name__ == "__main__":
    main()
