"""What regrading kept work costs, against grading: ``grade --keep-work`` then ``regrade``.

On the same tasks, in one run: ``termgrade grade`` with the scripted stand-in replaying each
task's reference solution (k attempts, so repeated files show the store's deduplication),
without and with ``--keep-work``; then ``termgrade regrade`` of the kept run against the
same tasks. Printed: wall time and trials per hour of each, the ``keep`` phase per trial
(median, max) and the ``rebuild`` phase of the regrade, the kept bytes before and after
deduplication, and whether every regraded verdict equals its source's.

    .venv/bin/python benchmarks/regrade_cost.py [--tasks 4] [--k 3] [--workers 2]

The policy is a scripted stand-in (benchmarks/_support/chat.py), never a model.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._support.chat import LoopbackChat  # noqa: E402
from benchmarks.grade_throughput import DEFAULT_TASKS, solver  # noqa: E402
from termgrade.agent import Endpoint, ScaffoldConfig  # noqa: E402
from termgrade.agent.kinds import ModelAgent  # noqa: E402
from termgrade.grade import grade_model  # noqa: E402
from termgrade.grade.regrade import regrade_run  # noqa: E402
from termgrade.sandbox.images import build_task_image  # noqa: E402
from termgrade.scoring.kept import WorkStore  # noqa: E402
from termgrade.scoring.replay import regrade_task  # noqa: E402
from termgrade.scoring.trial import run_task  # noqa: E402
from termgrade.task import Task, load_task  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    tasks = [load_task(ROOT / "environments" / name) for name in DEFAULT_TASKS[:args.tasks]]
    for task in tasks:
        build_task_image(task)
    roots = [t.paths.root for t in tasks]
    n = len(tasks) * args.k
    with tempfile.TemporaryDirectory() as scratch, LoopbackChat(solver(tasks)) as llm:
        agent = ModelAgent(Endpoint(llm.url, llm.model, api_key_env=None), ScaffoldConfig())
        walls: dict[bool, float] = {}
        for round_, keep in enumerate((False, True, False, True)):  # alternated, best of 2
            began = time.monotonic()
            report = grade_model(roots, agent, Path(scratch) / f"keep-{keep}-{round_}",
                                 k=args.k, workers=args.workers, progress=False,
                                 keep_work=keep)
            walls[keep] = min(walls.get(keep, float("inf")), time.monotonic() - began)
            assert len(report.counted) == n, report.lost
        source = Path(scratch) / "keep-True-3"
        began = time.monotonic()
        regraded = regrade_run(source, roots, Path(scratch) / "regraded",
                               workers=args.workers, progress=False)
        regrade_wall = time.monotonic() - began
        regraded.check()
        store = WorkStore.of_run(source)
        kept = [store.read(r.trial_id) for r in report.counted]
        logical = sum(w.bytes for w in kept if w)
        stored = sum(p.stat().st_size for p in (store.root / "blobs").rglob("*")
                     if p.is_file())
        phases = sequential(tasks, agent, Path(scratch) / "sequential")
    print(f"{len(tasks)} tasks x k={args.k} = {n} trials, {args.workers} workers, warm images")
    for keep, wall in walls.items():
        print(f"grade{' --keep-work' if keep else ''} (best of 2): {wall:.1f} s, "
              f"{n / wall * 3600:.0f} trials/h")
    print(f"regrade (no agent): {regrade_wall:.1f} s, {n / regrade_wall * 3600:.0f} trials/h")
    print(f"kept: {sum(1 for w in kept if w and w.regradable)}/{n} trials, {logical:,} bytes "
          f"of carried files, {stored:,} bytes stored (deduplicated by sha256)")
    same = len(regraded.changed()) == 0
    print(f"regraded verdicts equal the source's: {same} "
          f"({len(regraded.records)} regraded, {len(regraded.must_rerun)} must rerun)")
    for name, values in phases.items():
        print(f"{name}: median {statistics.median(values) * 1000:.1f} ms, "
              f"max {max(values) * 1000:.1f} ms ({len(values)} sequential trials)")


def sequential(tasks: list[Task], agent: ModelAgent, out: Path) -> dict[str, list[float]]:
    """One trial per task kept, then regraded, one at a time: the keep phase of grading,
    the rebuild phase and the whole of a regrade, and a grading trial's whole."""
    store = WorkStore.of_run(out)
    phases: dict[str, list[float]] = {"grade trial, total": [], "keep phase": [],
                                      "regrade trial, total": [], "rebuild phase": []}
    for task in tasks:
        image = build_task_image(task).tag
        graded = run_task(task, image, agent, keep_work=store)
        assert graded.kept is not None and graded.kept.reason is None
        work = graded.kept.manifest(trial_id=task.task_id, task_id=task.task_id,
                                    task_digest=None, agent_side_digest=None)
        again = regrade_task(task, image, work, store)
        assert again.reward == graded.reward == 1.0, (again.failure, graded.failure)
        phases["grade trial, total"].append(graded.durations["total"])
        phases["keep phase"].append(graded.durations["keep"])
        phases["regrade trial, total"].append(again.durations["total"])
        phases["rebuild phase"].append(again.durations["rebuild"])
    return phases


if __name__ == "__main__":
    main()
