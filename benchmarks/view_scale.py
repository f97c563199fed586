"""Benchmark: ``termgrade view`` on a release-sized run (36,144 synthetic trials).

Writes a synthetic grading corpus shaped like the release (six configurations on 1,004
tasks, k = 8 x4 and 2 x2: 36,144 attempts; ``--infra-rate 0`` keeps one trial per
attempt), optionally with synthetic transcripts (``--transcripts``: gigabytes, as the real
trajectories), then measures

* indexing: wall time of :func:`termgrade.view.load_run` (one streaming pass), the
  process's peak RSS, and the peak of Python allocations while indexing (tracemalloc, a
  second pass);
* pages: response time over HTTP from the served viewer on 127.0.0.1 of the first and a
  middle grid page, a filtered grid, a trial list, a cell page, a trial page and the JSON
  endpoints (median of ``--repeat`` requests), and their sizes: no page holds the run.

    .venv/bin/python benchmarks/view_scale.py [--tasks 1004] [--infra-rate 0]
        [--transcripts] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import statistics
import tempfile
import time
import tracemalloc
import urllib.request
from pathlib import Path

from termgrade.trialsets import write_trials
from termgrade.trialsets.synthetic import generate
from termgrade.trialsets.synthetic_config import PAPER_LIKE, SyntheticConfig
from termgrade.trialsets.synthetic_transcript import TranscriptMaker
from termgrade.view import find_sources, load_run
from termgrade.view.server import ViewServer


def _write(out: Path, tasks: int, infra: float, transcripts: bool) -> int:
    models = tuple(dataclasses.replace(m, infra_error_rate=infra) for m in PAPER_LIKE)
    corpus = generate(SyntheticConfig(models=models, n_tasks=tasks))
    records = TranscriptMaker(0).add_all(corpus.records) if transcripts else corpus.records
    return write_trials(out / "trials.jsonl", records)


def _get(url: str) -> tuple[float, int]:
    began = time.perf_counter()
    with urllib.request.urlopen(url) as answer:
        body = answer.read()
    return time.perf_counter() - began, len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1004)
    parser.add_argument("--infra-rate", type=float, default=0.0)
    parser.add_argument("--transcripts", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the run here (else a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = args.keep or Path(tmp)
        run.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        n = _write(run, args.tasks, args.infra_rate, args.transcripts)
        size = (run / "trials.jsonl").stat().st_size
        print(f"wrote {n:,} trials ({size / 2**20:,.1f} MiB) in "
              f"{time.perf_counter() - began:.1f} s")
        began = time.perf_counter()
        index = load_run(find_sources(run))
        took = time.perf_counter() - began
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tracemalloc.start()  # a second pass, traced (tracing slows it down)
        load_run(find_sources(run))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"index: {took:.2f} s, {len(index.trials):,} trials, {len(index.cells):,} cells; "
              f"peak RSS {rss:,.0f} MiB (the process, corpus generation included); peak "
              f"Python allocations while indexing {peak / 2**20:,.0f} MiB (tracemalloc)")
        middle = max(1, len(index.cells["task_id"].unique()) // 50 // 2)
        paths = {
            "grid page 1": "", f"grid page {middle}": f"?page={middle}",
            "grid band=central": "?band=central",
            "grid reason=tests_failed + near-miss": "?reason=tests_failed&near_miss=1",
            "trial list page 1": "trials", "trial list page 300": "trials?page=300",
            "cell page": "cell/100", "trial page": f"trial/{len(index.trials) // 2}",
            "api/grid": "api/grid?page=2", "api/trials": "api/trials?page=5",
            "api/trial": f"api/trial/{len(index.trials) // 2}",
        }
        with ViewServer(index) as server:
            print(f"{'page':40} {'median ms':>10} {'max ms':>8} {'KiB':>8}")
            for name, path in paths.items():
                times, size = [], 0
                for _ in range(args.repeat):
                    seconds, size = _get(server.url + path)
                    times.append(seconds * 1000)
                print(f"{name:40} {statistics.median(times):10.1f} {max(times):8.1f} "
                      f"{size / 1024:8.1f}")


if __name__ == "__main__":
    main()
