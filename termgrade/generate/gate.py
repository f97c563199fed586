"""The audit gate: the verified candidates against the corpus, each other and benchmarks.

The verified candidates and the corpus are audited together
(:func:`termgrade.audit.audit_corpus`); a candidate is dropped for any failed static
check (e.g. ``agent_code_isolated``: its tests import what the agent wrote into pytest's
own process), for a near-duplicate of a corpus task, for a near-duplicate of another
candidate that sorts before it (the first of a pair is kept), and for contamination
against the ``against`` benchmarks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from termgrade.audit import AuditSettings, audit_corpus
from termgrade.audit.records import TaskAudit


def _findings(audit: TaskAudit, candidates: set[str]) -> list[str]:
    found = [f"{name}: {reason}" for name, reason in audit.failed_checks.items()]
    for pair in audit.near_duplicates:
        other = pair.other(audit.task_id)
        if other not in candidates:
            found.append(f"near-duplicate of corpus task {other} ({pair.field}, "
                         f"Jaccard {pair.jaccard:.2f})")
        elif other < audit.task_id:
            found.append(f"near-duplicate of candidate {other} ({pair.field}, "
                         f"Jaccard {pair.jaccard:.2f})")
    for match in audit.contaminated:
        found.append(f"contamination: {match.field} overlaps {match.external_id} "
                     f"({match.score:.2f})")
    return list(dict.fromkeys(found))


def audit_candidates(task_dirs: Sequence[Path], *, corpus: Sequence[Path] = (),
                     against: Sequence[Path] = (),
                     settings: AuditSettings | None = None) -> dict[str, list[str]]:
    """Per candidate (task dir name), why the audit drops it (empty: clean)."""
    if not task_dirs:
        return {}
    report = audit_corpus([*task_dirs, *corpus], against=against, settings=settings,
                          progress=False, workers=1)
    names = {path.name for path in task_dirs}
    return {audit.task_id: _findings(audit, names) for audit in report.tasks
            if audit.task_id in names}
