"""The JSON the server answers beside its pages: small, paged, never a whole file.

``/api/summary`` (per configuration, as the report computes it), ``/api/grid`` (one page of
cells), ``/api/trials`` (one page of trial summaries) and ``/api/trial/N`` (one whole
record, read from its line).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from termgrade.records.roles import Role, fields_with
from termgrade.records.trial import TrialRecord
from termgrade.view.filters import Filters, paginate
from termgrade.view.index import RunIndex

INDEX_FIELDS = ("config", "reason", "near_miss", "failed_test", "failed_message")
"""The trial summaries' columns the run index computes (not record fields)."""
TRIAL_FIELDS = (*fields_with(TrialRecord, Role.SHOWN), *INDEX_FIELDS)
"""The columns of one trial summary: the record's fields declared ``Role.SHOWN``, then the
index's own."""


def plain(value: Any) -> Any:
    """A JSON-safe value: NaN -> None, numpy scalars -> Python, sets -> sorted lists."""
    if isinstance(value, frozenset | set):
        return sorted(value)
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def summary(index: RunIndex) -> dict[str, Any]:
    return {"configs": [c.model_dump() for c in index.configs],
            "near_misses": index.near_misses.model_dump(),
            "n_trials": len(index.trials), "n_cells": len(index.cells),
            "issues": [str(i) for i in index.issues]}


def grid(index: RunIndex, filters: Filters, number: int) -> dict[str, Any]:
    cells = index.cells
    mask = filters.cell_mask(cells)
    tasks = sorted(cells.loc[mask, "task_id"].unique())
    p = paginate(len(tasks), number)
    shown = cells[cells["task_id"].isin(set(tasks[p.start:p.stop])) & mask]
    out = []
    for row, cell in zip(shown.index, shown.to_dict("records"), strict=True):
        rewards = index.rewards(cell["task_id"], cell["model"], cell["scaffold"])
        out.append({**{k: plain(cell[k]) for k in (
            "task_id", "model", "scaffold", "config", "pass_rate", "band", "n_counted", "k",
            "n_passed", "n_trials", "n_lost", "median_turns", "median_tokens", "n_near_miss",
            "reasons", "split")},
            "row": int(row),
            "rewards": [r if c else None for r, c in rewards]})
    return {"page": p.number, "pages": p.count, "n_tasks": len(tasks), "cells": out}


def trial_summaries(index: RunIndex, filters: Filters, number: int) -> dict[str, Any]:
    matching: pd.DataFrame = index.trials[filters.trial_mask(index.trials, index.cells)]
    p = paginate(len(matching), number)
    rows = [{"row": int(row), **{k: plain(t[k]) for k in TRIAL_FIELDS}}
            for row, t in zip(matching.index[p.start:p.stop],
                              matching.iloc[p.start:p.stop].to_dict("records"), strict=True)]
    return {"page": p.number, "pages": p.count, "n_trials": len(matching), "trials": rows}
