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
5. ``verify`` (Docker): one explicit verdict per task (here: ``build_failed``, naming the
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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TERMGRADE = [sys.executable, "-m", "termgrade"]


def timed(label: str, args: list[str], *, quiet: bool = True) -> tuple[float, float, int]:
    """(seconds, peak RSS MiB, exit status) of one termgrade command."""
    env = {**os.environ, "TERMGRADE_PROGRESS": "0"}
    started = time.monotonic()
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen([*TERMGRADE, *args], cwd=ROOT, env=env, stdout=out, stderr=out)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - started
    rss = usage.ru_maxrss / 1024
    code = os.waitstatus_to_exitcode(status)
    print(f"{label:<34} {seconds:8.1f} s {rss:9.0f} MiB   exit {code}", flush=True)
    return seconds, rss, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a folder of Harbor task dirs")
    parser.add_argument("--skip-verify", action="store_true", help="no Docker stage")
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
        if not args.skip_verify:
            timed("verify -w 2 (Docker)", ["verify", str(corpus), "-w", "2", "-o",
                                           str(out / "verify.jsonl")])
        print(f"validate / build: {cold[0] / build[0]:.2f}")


if __name__ == "__main__":
    main()
