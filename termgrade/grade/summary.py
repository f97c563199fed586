"""What a grading run measured, per task: the rows of the table ``termgrade grade`` ends with.

One row per task of the run: counted attempts, passes, pass rate and band (over counted
trials only, as ``labels`` computes them), trials lost to infrastructure, and the model
requests that had to be tried again (429, 5xx, dropped connections), so a run that only
succeeded through retries does not look like a clean one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from termgrade.records.trial import TrialRecord
from termgrade.stats.bands import DEFAULT_SCHEME, BandScheme


@dataclass(frozen=True)
class TaskTally:
    """One task's grading tallies: counted, passed and lost trials, retries, its band."""

    task_id: str
    counted: int
    passed: int
    lost: int
    """Trials recorded uncounted (lost to infrastructure)."""
    http_retries: int
    """Retried model requests over the task's trials (those that recorded them)."""
    band: str | None
    """The label band of the pass rate; None with no counted trial."""

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.counted if self.counted else None


def summarize_tasks(records: Iterable[TrialRecord], *, scheme: BandScheme = DEFAULT_SCHEME
                    ) -> list[TaskTally]:
    """One :class:`TaskTally` per task in ``records``, sorted by task id. A counted
    attempt journaled twice (a resumed run) counts once, as in ``labels``."""
    counted: dict[str, dict[int, bool]] = {}
    lost: dict[str, int] = defaultdict(int)
    retries: dict[str, int] = defaultdict(int)
    for record in records:
        task = record.task_id
        attempts = counted.setdefault(task, {})  # a task with no counted trial gets a row
        retries[task] += record.http_retries or 0
        if record.counted:
            attempts.setdefault(record.attempt, record.passed)
        else:
            lost[task] += 1
    rows = []
    for task in sorted(counted):
        n = len(counted[task])
        passed = sum(counted[task].values())
        rows.append(TaskTally(task, n, passed, lost[task], retries[task],
                                scheme.band(passed / n) if n else None))
    return rows
