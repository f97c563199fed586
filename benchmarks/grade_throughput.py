"""Grading throughput: TermGrade's scaffold with an instant scripted policy vs Harbor's oracle.

Three measurements on the same tasks, in one run:

1. Per-trial overhead of ``termgrade grade``: each trial's wall time minus the time the
   agent's commands and test.sh spend running inside the containers (what is left is
   container start, the integrity review and carry, the attestation, recording), from
   sequential trials with the scripted stand-in replaying each task's reference solution
   as one bash tool call (instant: no model latency); cold (each trial makes its own
   containers) and warm (the next trial's pair made ahead by the warm pool, as ``grade``
   does for its queued attempt), with the phase profile of each
   (:mod:`termgrade.scoring.phases`).
2. Trials per hour of ``termgrade grade`` (``-w WORKERS``) and of ``harbor run -a oracle``
   (``-n WORKERS``) on the same tasks, same attempts.
3. With ``--ray``: trials per hour through a local Ray cluster (started here on loopback)
   at 1 and WORKERS slots.

    .venv/bin/python benchmarks/grade_throughput.py [--tasks 4] [--k 2] [--workers 2] [--ray]
        [--rounds 2] [--harbor .venv-harbor/bin/harbor]

Targets: warm per-trial overhead median at most 0.25 s; at least 10x Harbor's trials per
hour; no container of the run left afterwards.
The policy is a scripted stand-in (benchmarks/_support/chat.py), never a model.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._support.chat import LoopbackChat, Reply, replay_solutions  # noqa: E402
from termgrade.agent import Endpoint, ScaffoldConfig  # noqa: E402
from termgrade.agent.kinds import ModelAgent  # noqa: E402
from termgrade.grade import grade_model, local_pool  # noqa: E402
from termgrade.sandbox.images import build_task_image  # noqa: E402
from termgrade.scoring.pair.warm import WARM  # noqa: E402
from termgrade.scoring.phases import profile, quantile, render  # noqa: E402
from termgrade.scoring.trial import make_ahead, run_task  # noqa: E402
from termgrade.task import Task, load_task  # noqa: E402

DEFAULT_TASKS = ("word-frequency", "csv-keyed-join", "ini-layered-merge", "markdown-table-align",
                 "json-flatten-roundtrip", "tidy-filenames", "word-diff-minimal",
                 "sha256-manifest-check")


def solver(tasks: list[Task]) -> Reply:
    """A stand-in that replays the solution of whichever task the conversation is about."""
    return replay_solutions((t.instruction, t.paths.solve_script.read_text()) for t in tasks)


def overhead(tasks: list[Task], agent: ModelAgent, images: dict[str, str], *, rounds: int,
             warm: bool) -> tuple[list[float], list[dict[str, float]]]:
    """Sequential trials, each task ``rounds`` times; with ``warm``, each trial's pair is
    made ahead while the trial before it runs."""
    out, profiles = [], []
    order = [task for _ in range(rounds) for task in tasks]
    if warm:
        make_ahead(order[0], images[order[0].task_id])
    for i, task in enumerate(order):
        if warm and i + 1 < len(order):
            make_ahead(order[i + 1], images[order[i + 1].task_id])
        outcome = run_task(task, images[task.task_id], agent)
        assert outcome.reward == 1.0, (task.task_id, outcome.error, outcome.failure)
        d = outcome.durations
        inside = d.get("agent", 0.0) + d.get("verify", 0.0)
        out.append(d["total"] - inside)
        profiles.append(d)
        print(f"  {task.task_id:<28} total {d['total']:.2f} s  agent {d.get('agent', 0):.2f}"
              f"  test.sh {d.get('verify', 0):.2f}  overhead {out[-1]:.2f} s")
    WARM.drain()
    time.sleep(1.0)  # the background removals finish: their time is in the profile
    return out, profiles


def termgrade_rate(tasks: list[Task], agent: ModelAgent, k: int, workers: int,
                   pool: Any = None) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        began = time.monotonic()
        report = grade_model([t.paths.root for t in tasks], agent, Path(out), k=k,
                             pool=pool or local_pool(workers), progress=False)
        wall = time.monotonic() - began
    assert len(report.counted) == len(tasks) * k and report.pass_rate == 1.0
    return wall, len(report.counted) / wall * 3600


def harbor_rate(tasks: list[Task], k: int, workers: int, harbor: Path
                ) -> tuple[float, float] | None:
    if not harbor.exists():
        print("  (no .venv-harbor: run scripts/ensure_harbor.sh to compare with Harbor)")
        return None
    with tempfile.TemporaryDirectory() as scratch:
        dataset = Path(scratch) / "dataset"
        for task in tasks:
            shutil.copytree(task.paths.root, dataset / task.task_id)
        env = {**os.environ, "HARBOR_TELEMETRY": "0"}
        began = time.monotonic()
        done = subprocess.run([str(harbor), "run", "-y", "-a", "oracle", "-p", str(dataset),
                               "-k", str(k), "-n", str(workers), "-o", str(Path(scratch) / "jobs"),
                               "--job-name", "bench"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=3600, check=False)
        wall = time.monotonic() - began
    if done.returncode != 0:
        print(f"  harbor failed: {(done.stdout + done.stderr)[-800:]}")
        return None
    return wall, len(tasks) * k / wall * 3600


def ray_rates(tasks: list[Task], agent: ModelAgent, k: int, workers: int) -> list[str]:
    from termgrade.pools.ray_executor import LOOPBACK_ENV, ray_pool

    ray = Path(sys.executable).parent / "ray"
    port = "6391"
    temp = tempfile.mkdtemp(prefix="tg-ray-")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", LOOPBACK_ENV: "0"}
    subprocess.run([str(ray), "start", "--head", "--node-ip-address=127.0.0.1",
                    f"--port={port}", f"--num-cpus={max(workers, 1)}",
                    "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"],
                   check=True, env=env, capture_output=True)
    lines = []
    try:
        for slots in sorted({1, 2, workers}):
            wall, rate = termgrade_rate(tasks, agent, k, slots,
                                        pool=ray_pool(f"127.0.0.1:{port}", slots))
            lines.append(f"termgrade grade --ray, {slots} slot(s): {wall:.1f} s, "
                         f"{rate:.0f} trials/h")
    finally:
        subprocess.run([str(ray), "stop", "--force"], env=env, capture_output=True,
                       check=False)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ray", action="store_true", help="Also through a local Ray cluster.")
    parser.add_argument("--rounds", type=int, default=2,
                        help="Sequential trials per task for the overhead and the profile.")
    parser.add_argument("--harbor", type=Path, default=ROOT / ".venv-harbor" / "bin" / "harbor",
                        help="Harbor's CLI (scripts/ensure_harbor.sh installs it).")
    args = parser.parse_args()
    tasks = [load_task(ROOT / "environments" / name) for name in DEFAULT_TASKS[:args.tasks]]
    images = {t.task_id: build_task_image(t).tag for t in tasks}
    with LoopbackChat(solver(tasks)) as llm:
        agent = ModelAgent(Endpoint(llm.url, llm.model, api_key_env=None), ScaffoldConfig())
        costs = {}
        for mode in ("cold", "warm"):
            print(f"per-trial overhead, {mode} ({len(tasks)} tasks x {args.rounds}, "
                  "sequential, warm images):")
            costs[mode] = overhead(tasks, agent, images, rounds=args.rounds,
                                   warm=mode == "warm")
        made, used = WARM.made, WARM.used
        ours = termgrade_rate(tasks, agent, args.k, args.workers)
        warm_used = f"{WARM.used - used}/{WARM.made - made}"
        ray_lines = ray_rates(tasks, agent, args.k, args.workers) if args.ray else []
    left = own_containers()
    theirs = harbor_rate(tasks, args.k, args.workers, args.harbor)
    print()
    for mode, (cost, profiles) in costs.items():
        print(f"phase profile, {mode} ({len(profiles)} trials):")
        print(render(profile(profiles)))
        print(f"per-trial overhead, {mode}: median {statistics.median(cost):.3f} s, "
              f"p90 {quantile(cost, 0.9):.3f} s, max {max(cost):.3f} s"
              + (" (target <= 0.25 s)" if mode == "warm" else ""))
    print(f"termgrade grade, {args.workers} workers, {len(tasks)} tasks x k={args.k}: "
          f"{ours[0]:.1f} s, {ours[1]:.0f} trials/h (warm pairs used/made: {warm_used})")
    if theirs is not None:
        print(f"harbor run -a oracle, -n {args.workers}, same trials: {theirs[0]:.1f} s, "
              f"{theirs[1]:.0f} trials/h")
        print(f"termgrade / harbor: {ours[1] / theirs[1]:.1f}x trials per hour (target >= 10x)")
    for line in ray_lines:
        print(line)
    print(f"containers of this process left after the runs: {len(left)} (target 0)")


def own_containers() -> list[str]:
    """TermGrade containers this process made that still exist (after the reaper ran)."""
    from termgrade.sandbox.engine import docker_client
    from termgrade.sandbox.ownership import OWNER_LABEL, owner_id

    time.sleep(2.0)  # background removals of the last trials
    return [c.name for c in docker_client().containers.list(
        all=True, filters={"label": f"{OWNER_LABEL}={owner_id()}"})]


if __name__ == "__main__":
    main()
