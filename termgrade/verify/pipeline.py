"""``termgrade verify``: many tasks, in parallel, journaled, with a funnel at the end."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from termgrade.attacks import Attack
from termgrade.progress import track
from termgrade.task import discover_tasks
from termgrade.task.digest import task_digest
from termgrade.verify.journal import Journal
from termgrade.verify.record import VerifyRecord
from termgrade.verify.runner import ImageBuilder, TrialRunner, safe_verify_task
from termgrade.verify.verdict import Verdict


@dataclass
class VerifyReport:
    records: list[VerifyRecord]
    resumed: int = 0
    """Records taken from the journal rather than rerun."""

    @property
    def all_verified(self) -> bool:
        return bool(self.records) and all(r.verdict is Verdict.VERIFIED for r in self.records)

    def funnel(self) -> dict[str, int]:
        """candidates -> kept, and the drops by verdict."""
        counts = Counter(r.verdict.value for r in self.records)
        funnel = {"candidates": len(self.records), "kept": counts.pop(Verdict.VERIFIED.value, 0)}
        funnel.update({f"dropped:{k}": v for k, v in sorted(counts.items())})
        return funnel


def verify_tasks(
    roots: list[Path],
    *,
    repeat: int = 2,
    workers: int = 2,
    journal: Journal | None = None,
    resume: bool = False,
    progress: bool | None = None,
    attacks: list[Attack] | None = None,
    run_trial: TrialRunner | None = None,
    build_image: ImageBuilder | None = None,
) -> VerifyReport:
    """Verify every task under ``roots``. Finished records are journaled one by one;
    with ``resume`` a task whose digest matches its journaled record is not rerun.
    ``run_trial`` / ``build_image``: see :func:`~termgrade.verify.runner.verify_task`."""
    task_dirs = discover_tasks(*roots)
    done: dict[str, VerifyRecord] = {}
    if journal is not None:
        if resume:
            done = journal.load()
        else:
            journal.reset()
    results: dict[str, VerifyRecord] = {}
    todo = []
    for path in task_dirs:
        previous = done.get(path.name)
        if previous is not None and previous.task_digest == task_digest(path) \
                and previous.attacks_played >= len(attacks or []):
            results[path.name] = previous
        else:
            todo.append(path)
    resumed = len(results)
    with track("verify", total=len(task_dirs), enabled=progress) as bar, \
            ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for _ in range(resumed):
            bar.advance()
        futures = {pool.submit(safe_verify_task, path, repeat=repeat, attacks=attacks,
                               run_trial=run_trial, build_image=build_image): path
                   for path in todo}
        try:
            for future in as_completed(futures):
                record = future.result()
                results[record.task_id] = record
                if journal is not None:
                    journal.append(record)
                bar.advance(f"verify [dim]{record.task_id}: {record.verdict.value}")
        except BaseException:
            # Interrupted: queued tasks never start; a started one finishes unrecorded.
            for pending in futures:
                pending.cancel()
            raise
    return VerifyReport(records=[results[p.name] for p in task_dirs], resumed=resumed)
