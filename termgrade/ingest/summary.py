"""A short account of an ingestion: trials per task x model x scaffold, and what was skipped."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from termgrade.ingest.harbor import IngestResult


@dataclass(frozen=True)
class GroupSummary:
    task_id: str
    model: str
    scaffold: str
    trials: int
    counted: int
    passed: int
    uncounted_reasons: tuple[str, ...]
    """Exception types of the trials that do not count, sorted, repeated per trial."""


def group_summaries(result: IngestResult) -> list[GroupSummary]:
    groups: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for record in result.records:
        groups[(record.task_id, record.model, record.scaffold)].append(record)
    return [
        GroupSummary(
            task_id=task, model=model, scaffold=scaffold, trials=len(rows),
            counted=sum(1 for r in rows if r.counted),
            passed=sum(1 for r in rows if r.passed),
            uncounted_reasons=tuple(sorted(r.exception_type or "no reward"
                                           for r in rows if not r.counted)),
        )
        for (task, model, scaffold), rows in sorted(groups.items())
    ]


def summary_json(result: IngestResult) -> dict[str, Any]:
    return {
        "trials": len(result.records),
        "counted": sum(1 for r in result.records if r.counted),
        "passed": sum(1 for r in result.records if r.passed),
        "layouts": dict(sorted(result.layouts.items())),
        "skipped": [{"path": str(s.path), "kind": s.kind, "reason": s.reason}
                    for s in result.skipped],
        "skipped_incomplete": result.skipped_count("incomplete"),
        "skipped_malformed": result.skipped_count("malformed"),
        "duplicates": result.duplicates,
        "notes": list(result.notes),
        "groups": [asdict(g) for g in group_summaries(result)],
    }
