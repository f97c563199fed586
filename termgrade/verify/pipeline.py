"""``termgrade verify``: many tasks, in parallel, journaled, with a funnel at the end."""

from __future__ import annotations

from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from termgrade.attacks import Attack, load_attacks
from termgrade.core.errors import OptionError, TermGradeError
from termgrade.core.progress import track
from termgrade.task import discover_tasks
from termgrade.task.digest import task_digest
from termgrade.verify.journal import Journal
from termgrade.verify.record import VerifyRecord
from termgrade.verify.runner import ImageBuilder, TrialRunner, _failed_record, safe_verify_task
from termgrade.verify.verdict import Verdict

if TYPE_CHECKING:
    from termgrade.pools.executors import Pool


@dataclass
class VerifyReport:
    records: list[VerifyRecord]
    resumed: int = 0
    """Records taken from the journal rather than rerun."""
    unreadable: list[str] = field(default_factory=list)
    """Journal lines kept in the file but not read (a newer version, a bad field)."""

    @property
    def all_verified(self) -> bool:
        return bool(self.records) and all(r.verdict is Verdict.VERIFIED for r in self.records)

    def funnel(self) -> dict[str, int]:
        """candidates -> kept, and the drops by verdict."""
        counts = Counter(r.verdict.value for r in self.records)
        funnel = {"candidates": len(self.records), "kept": counts.pop(Verdict.VERIFIED.value, 0)}
        funnel.update({f"dropped:{k}": v for k, v in sorted(counts.items())})
        return funnel


def _node_attack(attack: Attack) -> Attack:
    """``attack`` with a script this machine has: a shipped attack's script lies in the
    driver's install, which may sit elsewhere on a cluster node."""
    if attack.script.is_file():
        return attack
    try:
        return load_attacks([attack.name])[0]
    except TermGradeError:
        return attack


def verify_on_node(task_dir: Path, *, repeat: int,
                   attacks: list[Attack] | None = None) -> VerifyRecord:
    """:func:`~termgrade.verify.runner.safe_verify_task` as a pool's work on any machine
    (a Ray node): the attacks' scripts are found in this machine's install."""
    return safe_verify_task(task_dir, repeat=repeat,
                            attacks=[_node_attack(a) for a in attacks] if attacks else attacks)


def _lost_record(path: Path, where: str, exc: Exception) -> VerifyRecord:
    """The pool lost the task (a Ray worker or node died): an ``error`` with no digest, so
    that ``--resume`` runs it again."""
    return _failed_record(path.name, "", Verdict.ERROR,
                          f"lost by the pool at {where}: {type(exc).__name__}: {exc}", {})


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
    pool: Pool | None = None,
) -> VerifyReport:
    """Verify every task under ``roots``. Finished records are journaled one by one;
    with ``resume`` a task whose digest matches its journaled record is not rerun.
    ``run_trial`` / ``build_image``: see :func:`~termgrade.verify.runner.verify_task`.
    ``pool``: where tasks run, ``pool.slots`` at once (default: ``workers`` threads here);
    the caller shuts it down. On a pool that is not local (Ray), tasks go by absolute path
    (the same on every node), ``run_trial`` / ``build_image`` cannot go along, and a task
    the pool loses is recorded as an ``error`` that ``--resume`` runs again."""
    remote = pool is not None and pool.where != "local"
    if pool is not None and remote and (run_trial is not None or build_image is not None):
        raise OptionError(
            f"run_trial / build_image replace the Docker runner of this process; they "
            f"cannot run on the pool at {pool.where}",
            fix="drop them, or verify with a local pool")
    task_dirs = discover_tasks(*roots)
    done: dict[str, VerifyRecord] = {}
    if journal is not None:
        if resume:
            done = journal.load()
        else:
            journal.reset()
    results: dict[str, VerifyRecord] = {}
    todo: deque[Path] = deque()
    for path in task_dirs:
        previous = done.get(path.name)
        if previous is not None and previous.task_digest == task_digest(path) \
                and previous.attacks_played >= len(attacks or []):
            results[path.name] = previous
        else:
            todo.append(path)
    resumed = len(results)
    executor: Executor = pool.executor if pool is not None \
        else ThreadPoolExecutor(max_workers=max(1, workers))
    slots = max(1, pool.slots if pool is not None else workers)

    def submit(path: Path) -> Future[VerifyRecord]:
        if remote:
            return executor.submit(verify_on_node, path.resolve(), repeat=repeat,
                                   attacks=attacks)
        return executor.submit(safe_verify_task, path, repeat=repeat, attacks=attacks,
                               run_trial=run_trial, build_image=build_image)

    running: dict[Future[VerifyRecord], Path] = {}
    with track("verify", total=len(task_dirs), enabled=progress) as bar:
        for _ in range(resumed):
            bar.advance()
        try:
            while todo or running:
                while todo and len(running) < slots:
                    path = todo.popleft()
                    running[submit(path)] = path
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    path = running.pop(future)
                    try:
                        record = future.result()
                    except Exception as exc:
                        if pool is None or not remote:
                            raise
                        record = _lost_record(path, pool.where, exc)
                    results[record.task_id] = record
                    if journal is not None:
                        journal.append(record)
                    bar.advance(f"verify [dim]{record.task_id}: {record.verdict.value}")
        except BaseException as exc:
            # Interrupted: queued tasks never start; a started one finishes unrecorded,
            # and after Ctrl-C its image build is stopped rather than waited for.
            for pending in running:
                pending.cancel()
            if isinstance(exc, KeyboardInterrupt):
                from termgrade.sandbox.engine import abort_builds

                abort_builds()
            raise
        finally:
            if pool is None:  # ours: wait for the started ones, as before
                executor.shutdown(wait=True)
    return VerifyReport(records=[results[p.name] for p in task_dirs], resumed=resumed,
                        unreadable=[str(line) for line in journal.unreadable]
                        if journal is not None else [])
