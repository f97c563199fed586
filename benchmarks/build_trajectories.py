"""Benchmark: build the trajectories repo from synthetic trials, two ways.

1. ``termgrade``: :func:`termgrade.builders.trajectories.build_trajectories` (streams the
   JSONL line by line into bounded row groups; both configs in one pass).
2. ``datasets``: the obvious alternative on the same input and the same row conversion:
   ``datasets.Dataset.from_generator(...)`` of the trajectory rows (both configs' columns),
   then ``.to_parquet`` of the ``episodes`` and of the ``sft`` columns (one parse of the
   input, as here).

Each method runs in its own child process; its peak RSS comes from ``os.wait4`` (that
child only). Throughput is input JSONL MB per wall-clock second, and per CPU second
(steadier on a shared machine). The input is ``termgrade synth --transcripts``
(:mod:`termgrade.trialsets.synthetic_transcript`), streamed to a temp JSONL: about 36
counted attempts per task, a dozen turns per graded trial, terminal frames of a few KB
with a rare 0.1-1 MB frame.

    .venv/bin/python benchmarks/build_trajectories.py                # 36,144 trials
    .venv/bin/python benchmarks/build_trajectories.py --trials 2000  # quick run
    .venv/bin/python benchmarks/build_trajectories.py --methods termgrade --validate
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ATTEMPTS_PER_TASK = 36
"""Counted attempts per task of `termgrade synth`'s six default models (k = 8 x4, 2 x2)."""


def generate(path: Path, n_trials: int, seed: int = 0) -> tuple[int, int, list[str]]:
    """`termgrade synth --transcripts` for about ``n_trials`` counted attempts: bytes and
    records written (retries of infrastructure errors included) and the task ids."""
    from termgrade.trialsets import write_trials
    from termgrade.trialsets.synthetic import generate as synth
    from termgrade.trialsets.synthetic_config import SyntheticConfig
    from termgrade.trialsets.synthetic_transcript import TranscriptMaker

    config = SyntheticConfig(n_tasks=max(1, round(n_trials / ATTEMPTS_PER_TASK)), seed=seed)
    corpus = synth(config)
    n = write_trials(path, TranscriptMaker(seed).add_all(corpus.records))
    return path.stat().st_size, n, sorted(set(corpus.truth["task_id"]))


def make_tasks(root: Path, task_ids: list[str]) -> None:
    for task_id in task_ids:
        task = root / task_id
        for sub in ("environment", "solution", "tests"):
            (task / sub).mkdir(parents=True, exist_ok=True)
        (task / "task.toml").write_text('schema_version = "1.4"\n[metadata]\ndomain = "bench"\n')
        (task / "instruction.md").write_text(f"Synthetic task {task_id}.\n")
        (task / "environment" / "Dockerfile").write_text("FROM termgrade/base:local\n")
        (task / "solution" / "solve.sh").write_text("true\n")
        (task / "tests" / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")


# -- the two methods (each runs in a child process) ----------------------------------------

def run_termgrade(trials: Path, tasks: Path, out: Path) -> None:
    from termgrade.builders.trajectories import build_trajectories

    build_trajectories(out, trials=trials, task_roots=[tasks])


def _trajectory_rows(trials: Path, instructions: dict[str, str]) -> Iterator[dict[str, Any]]:
    from termgrade.builders.trajectory_rows import chat_messages, trajectory_row
    from termgrade.records import TrialRecord
    from termgrade.records.version import validate_record

    with trials.open("rb") as handle:
        for line in handle:
            trial = validate_record(TrialRecord, line).model_dump(mode="json")
            yield trajectory_row(trial, chat_messages(trial), instructions[trial["task_id"]])


def run_datasets(trials: Path, tasks: Path, out: Path) -> None:
    from datasets import Dataset, Features

    from termgrade.builders.inputs import load_tasks
    from termgrade.builders.rows import EpisodeRow, SftRow, schema_for
    from termgrade.builders.trajectory_writer import combined_schema

    instructions = {t: task.instruction for t, task in load_tasks([tasks]).items()}
    sft_schema, episode_schema = schema_for(SftRow), schema_for(EpisodeRow)
    features = Features.from_arrow_schema(combined_schema(sft_schema, episode_schema))
    cache = out.parent / f"{out.name}-hf-cache"
    table = Dataset.from_generator(_trajectory_rows, features=features, cache_dir=str(cache),
                                   gen_kwargs={"trials": trials, "instructions": instructions})
    for config, schema in (("episodes", episode_schema), ("sft", sft_schema)):
        (out / "data" / config).mkdir(parents=True)
        table.select_columns(schema.names).to_parquet(
            str(out / "data" / config / "train-00000-of-00001.parquet"))
    shutil.rmtree(cache, ignore_errors=True)


def run_validate(trials: Path, tasks: Path, out: Path) -> None:
    """``termgrade validate`` of the repo the termgrade method built (its cache beside it:
    the first run is cold, a second one finds every file unchanged)."""
    from termgrade.validate import validate_repo

    report = validate_repo(out)
    if not report.ok:
        raise SystemExit(f"validate found {len(report.findings)} finding(s): "
                         f"{report.findings[:3]}")


METHODS = {"termgrade": run_termgrade, "datasets": run_datasets, "validate": run_validate}


# -- measurement -----------------------------------------------------------------------------

def _max_row_group(out: Path) -> int:
    import pyarrow.parquet as pq

    sizes = []
    for path in out.rglob("*.parquet"):
        meta = pq.ParquetFile(path).metadata
        sizes += [meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)]
    return max(sizes, default=0)


def measure(method: str, trials: Path, tasks: Path, out: Path) -> dict[str, float]:
    env = {**os.environ, "TERMGRADE_PROGRESS": "0", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--child", method, str(trials),
                              str(tasks), str(out)], env=env)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{method} failed (exit {os.waitstatus_to_exitcode(status)})")
    size = trials.stat().st_size
    out_bytes = sum(p.stat().st_size for p in out.rglob("*.parquet"))
    cpu = usage.ru_utime + usage.ru_stime
    return {"seconds": seconds, "mb_per_s": size / 1e6 / seconds, "cpu_seconds": cpu,
            "mb_per_cpu_s": size / 1e6 / cpu,
            "peak_rss_mib": usage.ru_maxrss / 1024, "parquet_mb": out_bytes / 1e6,
            "max_row_group_mib": _max_row_group(out) / 1024**2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=36_144)
    parser.add_argument("--workdir", type=Path, default=None, help="Default: a temp dir.")
    parser.add_argument("--methods", default="termgrade,datasets")
    parser.add_argument("--validate", action="store_true",
                        help="Also time `validate` of the termgrade build, cold then warm.")
    parser.add_argument("--child", nargs=4, metavar=("METHOD", "TRIALS", "TASKS", "OUT"))
    args = parser.parse_args()
    if args.child:
        method, trials, tasks, out = args.child
        METHODS[method](Path(trials), Path(tasks), Path(out))
        return
    work = Path(tempfile.mkdtemp(prefix="bench-traj-", dir=args.workdir))
    try:
        trials = work / "trials.jsonl"
        started = time.perf_counter()
        size, n_records, task_ids = generate(trials, args.trials)
        print(f"input: ~{args.trials:,} counted trials ({n_records:,} records with retries, "
              f"{len(task_ids):,} tasks), {size / 1e6:,.0f} MB JSONL (termgrade synth "
              f"--transcripts, in {time.perf_counter() - started:.0f} s)", flush=True)
        make_tasks(work / "tasks", task_ids)
        results = {}
        for method in args.methods.split(","):
            results[method] = measure(method, trials, work / "tasks", work / f"out-{method}")
            if method == "termgrade" and args.validate:
                for run in ("validate (cold)", "validate (warm)"):
                    results[run] = measure("validate", trials, work / "tasks",
                                           work / "out-termgrade")
                    print(f"{run}: " + json.dumps({k: round(v, 1)
                                                   for k, v in results[run].items()}), flush=True)
            shutil.rmtree(work / f"out-{method}", ignore_errors=True)
            (work / f"out-{method}.validate-cache.json").unlink(missing_ok=True)
            print(f"{method}: " + json.dumps({k: round(v, 1) for k, v in results[method].items()}),
                  flush=True)
        print(f"\n{'method':<16} {'seconds':>8} {'MB/s':>7} {'CPU s':>7} {'MB/CPU s':>9} "
              f"{'peak RSS MiB':>13} {'parquet MB':>11} {'max row group MiB':>18}")
        for method, r in results.items():
            print(f"{method:<16} {r['seconds']:>8.1f} {r['mb_per_s']:>7.1f} "
                  f"{r['cpu_seconds']:>7.1f} {r['mb_per_cpu_s']:>9.1f} "
                  f"{r['peak_rss_mib']:>13.0f} {r['parquet_mb']:>11.0f} "
                  f"{r['max_row_group_mib']:>18.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
