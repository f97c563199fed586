"""``audit_corpus``: static checks, near-duplicates and contamination over a corpus."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from termgrade.audit.contamination import ExternalIndex
from termgrade.audit.documents import AuditDoc, find_tasks, read_harbor, read_task
from termgrade.audit.neardup import near_duplicates
from termgrade.audit.records import FIELDS, AuditReport, AuditSettings, TaskAudit
from termgrade.audit.static_checks import CheckOptions, run_checks
from termgrade.core.progress import track
from termgrade.pools.processes import map_in_workers
from termgrade.task import discover_tasks


def read_external(roots: Sequence[Path], exclude: set[Path]) -> tuple[list[AuditDoc], list[str]]:
    """External tasks under ``roots`` (either format), minus ``exclude``d directories."""
    docs: list[AuditDoc] = []
    problems: list[str] = []
    for root in roots:
        for directory in find_tasks(Path(root).resolve()):
            if directory in exclude:
                continue
            doc = read_task(directory)
            docs.append(doc)
            problems.extend(f"{directory}: {problem}" for problem in doc.problems)
    return docs, problems


PARALLEL_FROM = 200
"""Corpora this large run their static checks in a process per core."""

CheckResults = dict[str, dict[str, str | None]]


def check_task_dirs(items: list[list[Any]]) -> list[dict[str, str | None]]:
    """The static checks of ``[task dir, min_tests]`` items: a worker's job
    (:mod:`termgrade.pools.processes`); each task's files are read there."""
    return [run_checks(read_harbor(Path(path)), CheckOptions(min_tests=min_tests))
            for path, min_tests in items]


def _run_static_checks(docs: list[AuditDoc], options: CheckOptions, *, workers: int | None,
                       progress: bool | None) -> CheckResults:
    checks: CheckResults = {}
    with track("audit", total=len(docs), enabled=progress) as bar:
        if workers == 1 or len(docs) < PARALLEL_FROM:
            for doc in docs:
                checks[doc.task_id] = run_checks(doc, options)
                bar.advance(f"audit [dim]{doc.task_id}")
            return checks

        def advance(n: int) -> None:
            for _ in range(n):
                bar.advance("audit [dim]static checks")

        items = [[str(doc.root), options.min_tests] for doc in docs]
        results = map_in_workers("termgrade.audit.pipeline:check_task_dirs", items,
                                 workers=workers, on_result=advance)
        for doc, result in zip(docs, results, strict=True):
            checks[doc.task_id] = result
    return checks


def audit_corpus(
    paths: Sequence[str | Path],
    *,
    against: Sequence[str | Path] = (),
    settings: AuditSettings | None = None,
    progress: bool | None = None,
    workers: int | None = None,
) -> AuditReport:
    """Audit every Harbor task under ``paths`` (task dirs or folders of them).

    Raises :class:`termgrade.task.errors.TaskLoadError` when a path does not exist; a task
    that does not load is reported by its ``task_loads`` check, not raised. ``workers``:
    processes for the static checks of a corpus of :data:`PARALLEL_FROM` tasks or more
    (default: :func:`termgrade.pools.processes.default_workers`).
    """
    chosen = settings or AuditSettings()
    task_dirs = discover_tasks(*paths)
    docs = [read_harbor(path) for path in task_dirs]
    options = CheckOptions(min_tests=chosen.min_tests)
    checks = _run_static_checks(docs, options, workers=workers, progress=progress)
    pairs = [pair for field in FIELDS for pair in near_duplicates(
        docs, field, threshold=chosen.threshold, shingle_size=chosen.shingle_size,
        num_perm=chosen.num_perm)]
    externals, problems = read_external([Path(p) for p in against], set(task_dirs))
    indexes = [ExternalIndex.build(externals, field, chosen.ngram) for field in FIELDS]
    tasks = []
    for doc in docs:
        matches = [m for index in indexes
                   if (m := index.closest(doc, chosen.contamination_threshold)) is not None]
        tasks.append(TaskAudit(
            task_id=doc.task_id, path=str(doc.root), checks=checks[doc.task_id],
            near_duplicates=[p for p in pairs if doc.task_id in (p.task_a, p.task_b)],
            contamination=matches))
    return AuditReport(tasks=tasks, pairs=pairs, settings=chosen,
                       external_tasks=len(externals), external_problems=problems)
