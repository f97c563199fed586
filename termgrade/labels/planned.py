"""``k`` as the runs planned it: read from their run records, never guessed from the trials.

A cell (task x model x scaffold) graded by runs that each wrote a
:class:`~termgrade.records.run.RunRecord` (``runs.jsonl`` beside ``trials.jsonl``) was
planned ``sum(run.k)`` attempts, and an adaptive run may stop a task once it has
``k_min``: the cell is short only below ``sum(run.k_min)``. A ``termgrade regrade`` run
(``regrade_of``) scored its source's attempts again and copies its plan: read with its
source, it adds no attempts (its source's trials it regraded are superseded,
:func:`termgrade.trialsets.checks.check_trials`). A cell with a trial from a run
without a record (a file from before run records, a Harbor ingest) has no plan here; its
``k`` is inferred as before.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from termgrade.records.run import RunRecord

PLAN_COLUMNS = ["planned_k", "planned_min", "adaptive"]


def planned(frame: pd.DataFrame, runs: Mapping[str, RunRecord],
            keys: list[str]) -> pd.DataFrame:
    """Per cell (indexed by ``keys``, the label's): ``planned_k``, ``planned_min`` (NaN
    without a plan) and ``adaptive``."""
    empty = pd.DataFrame(columns=PLAN_COLUMNS, index=pd.MultiIndex.from_tuples([], names=keys))
    if not runs or "job_id" not in frame.columns or frame.empty:
        return empty
    rows = []
    for key, jobs in frame.groupby(keys, sort=False)["job_id"]:
        ids = set(jobs)
        if any(job is None or pd.isna(job) or job not in runs for job in ids):
            continue
        records = [runs[job] for job in sorted(ids) if runs[job].regrade_of not in ids]
        rows.append((*key, sum(r.k for r in records), sum(r.k_min for r in records),
                     any(r.adaptive for r in records)))
    if not rows:
        return empty
    return pd.DataFrame(rows, columns=[*keys, *PLAN_COLUMNS]).set_index(keys)
