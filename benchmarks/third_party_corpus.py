"""Benchmark: a third-party Harbor corpus (TermiGen's 3,566 tasks) through TermGrade.

Each stage runs as its own ``termgrade`` command in a child process; its wall time and
peak RSS come from ``os.wait4`` (that child and the worker processes it waited for).

1. ``audit CORPUS --against environments``: static checks, near-duplicates within the
   corpus, contamination against TermGrade's own corpus.
2. ``build environments -t CORPUS``: the environments repo (parquet rows with archives,
   the browsable ``tasks/`` tree, registry.json).
3. ``validate --write-secrets-baseline``: write the detect-secrets baseline to review
   (TermiGen's fixtures hold thousands of hashes and sample keys), untimed.
4. ``validate`` cold (no cache) and warm (nothing changed), with that baseline.
5. The ratio: ``--repeat`` more rounds of a build (to a scratch folder) and a cold
   validate, one after the other, so that both see the same machine; the medians are
   compared (a shared VM's speed drifts by 2x over minutes).
6. ``verify`` (Docker): one explicit verdict per task (here: ``build_failed``, naming the
   registry image nobody can pull offline).

Get the corpus (never commit it) and run:

    git clone https://github.com/zjysteven/terminal-bench-env /tmp/termigen
    .venv/bin/python benchmarks/third_party_corpus.py /tmp/termigen/environments_harbor

Targets (issue: third-party corpora): audit and build under 2 min each, validate no
slower than build, peak RSS under 1 GiB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TERMGRADE = [sys.executable, "-m", "termgrade"]


def timed(label: str, args: list[str], *, quiet: bool = True) -> tuple[float, float, int]:
    """(seconds, peak RSS MiB, exit status) of one termgrade command; its CPU seconds
    (its own and its workers') are printed too."""
    env = {**os.environ, "TERMGRADE_PROGRESS": "0"}
    started = time.monotonic()
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen([*TERMGRADE, *args], cwd=ROOT, env=env, stdout=out, stderr=out)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - started
    rss = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    print(f"{label:<34} {seconds:8.1f} s {rss:9.0f} MiB   exit {code}   ({cpu:.1f} CPU s)",
          flush=True)
    return seconds, rss, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a folder of Harbor task dirs")
    parser.add_argument("--skip-verify", action="store_true", help="no Docker stage")
    parser.add_argument("--repeat", type=int, default=3,
                        help="further build + cold validate rounds for the ratio")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    n_tasks = sum(1 for p in corpus.iterdir() if (p / "task.toml").is_file())
    print(f"corpus: {corpus} ({n_tasks} tasks)")
    print(f"{'stage':<34} {'wall':>10} {'peak RSS':>13}")
    with tempfile.TemporaryDirectory(prefix="termgrade-bench-") as tmp:
        repo = Path(tmp) / "termigen-environments"
        out = Path(tmp)
        timed("audit (subject, --against ours)",
              ["audit", str(corpus), "--against", str(ROOT / "environments"),
               "--markdown", str(out / "audit.md")])
        build = timed("build environments",
                      ["build", "environments", "-t", str(corpus), "-o", str(repo),
                       "--repo-id", "someone/termigen-environments"])
        subprocess.run([*TERMGRADE, "validate", str(repo), "--write-secrets-baseline",
                        "--no-load", "--no-cache"], cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        cold = timed("validate (cold, --no-cache)", ["validate", str(repo), "--no-cache"])
        timed("validate (cold, cache written)", ["validate", str(repo)])
        timed("validate (warm, nothing changed)", ["validate", str(repo)])
        timed("validate --no-secrets (cold)", ["validate", str(repo), "--no-secrets",
                                               "--no-cache"])
        builds, validates = [build[0]], [cold[0]]
        for n in range(args.repeat):
            scratch = Path(tmp) / f"round-{n}"
            builds.append(timed(f"round {n + 1}: build environments",
                                ["build", "environments", "-t", str(corpus), "-o",
                                 str(scratch), "--repo-id", "someone/termigen-environments"])[0])
            shutil.rmtree(scratch)
            validates.append(timed(f"round {n + 1}: validate (cold)",
                                   ["validate", str(repo), "--no-cache"])[0])
        if not args.skip_verify:
            timed("verify -w 2 (Docker)", ["verify", str(corpus), "-w", "2", "-o",
                                           str(out / "verify.jsonl")])
        build_s, validate_s = statistics.median(builds), statistics.median(validates)
        rounds = ", ".join(f"{v / b:.2f}" for b, v in zip(builds, validates, strict=True))
        print(f"median of {len(builds)}: build {build_s:.1f} s, validate (cold) "
              f"{validate_s:.1f} s; validate / build: {validate_s / build_s:.2f} "
              f"(per round: {rounds})")


if __name__ == "__main__":
    main()
