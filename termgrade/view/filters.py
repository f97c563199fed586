"""What the grid and the trial list show: filters, and pages of a fixed size.

A filter narrows cells (task x model x scaffold) of the grid: by band, split, failure
reason (a cell matches when one of its trials failed for that reason), near-miss (a cell
holding a near-miss trial) and configuration. The grid shows the tasks with at least one
matching cell, ``PAGE_SIZE`` to a page; the trial list shows matching trials the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import pandas as pd

PAGE_SIZE = 50
"""Tasks per grid page, trials per trial-list page."""


@dataclass(frozen=True)
class Filters:
    band: str | None = None
    split: str | None = None
    reason: str | None = None
    near_miss: bool = False
    config: str | None = None

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Filters:
        def value(name: str) -> str | None:
            text = query.get(name, "").strip()
            return text or None

        return cls(band=value("band"), split=value("split"), reason=value("reason"),
                   near_miss=value("near_miss") in ("1", "true", "on"),
                   config=value("config"))

    def query(self) -> dict[str, str]:
        """The non-empty filters as query parameters (the inverse of :meth:`from_query`)."""
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is True:
                out[f.name] = "1"
            elif value:
                out[f.name] = str(value)
        return out

    def active(self) -> bool:
        return bool(self.query())

    @classmethod
    def single(cls, name: str, value: str) -> Filters:
        """The one filter ``name`` = ``value`` (a band, split, reason or config)."""
        chosen: dict[str, str | None] = dict.fromkeys(("band", "split", "reason", "config"))
        if name not in chosen:
            raise ValueError(f"no filter named {name!r}")
        chosen[name] = value
        return cls(band=chosen["band"], split=chosen["split"], reason=chosen["reason"],
                   config=chosen["config"])

    def cell_mask(self, cells: pd.DataFrame) -> pd.Series:
        mask = pd.Series(True, index=cells.index)
        if self.band:
            mask &= cells["band"] == self.band
        if self.split:
            mask &= cells["split"] == self.split
        if self.reason:
            mask &= cells["reasons"].map(lambda reasons: self.reason in reasons)
        if self.near_miss:
            mask &= cells["n_near_miss"] > 0
        if self.config:
            mask &= cells["config"] == self.config
        return mask

    def trial_mask(self, trials: pd.DataFrame, cells: pd.DataFrame) -> pd.Series:
        """Trials of matching cells that themselves match the trial-level filters
        (``trials["cell"]`` is each trial's row in ``cells``)."""
        matching = self.cell_mask(cells).to_numpy()
        mask = pd.Series(matching[trials["cell"].to_numpy()], index=trials.index)
        if self.reason:
            mask &= trials["reason"] == self.reason
        if self.near_miss:
            mask &= trials["near_miss"].astype(bool)
        return mask


@dataclass(frozen=True)
class Page:
    number: int
    """1-based."""
    count: int
    """Pages in all (at least 1)."""
    start: int
    stop: int


def paginate(total: int, number: int, size: int = PAGE_SIZE) -> Page:
    count = max(1, -(-total // size))
    number = min(max(1, number), count)
    start = (number - 1) * size
    return Page(number, count, start, min(total, start + size))
