"""Difficulty bands: named intervals of the pass rate.

The default scheme is the release's: ``zero`` (p = 0), ``low`` (0 < p < 0.25), ``central``
(0.25 <= p <= 0.75), ``high`` (0.75 < p < 1), ``one`` (p = 1). Any interior cut points
``c1 < ... < cm`` in (0, 1) give ``m + 3`` bands: 0 alone, the segments between the cuts,
1 alone. A pass rate equal to a cut belongs to the neighbouring segment whose middle is
nearer 0.5 (so with the default cuts 0.25 and 0.75 are central), which keeps any symmetric
scheme symmetric.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from termgrade.core.errors import OptionError

DEFAULT_CUTS = (0.25, 0.75)
DEFAULT_NAMES = ("zero", "low", "central", "high", "one")
_EXACT = 1e-12


@dataclass(frozen=True)
class BandScheme:
    cuts: tuple[float, ...] = DEFAULT_CUTS
    names: tuple[str, ...] = DEFAULT_NAMES

    def __post_init__(self) -> None:
        cuts = self.cuts
        if any(not 0 < c < 1 for c in cuts) or list(cuts) != sorted(set(cuts)):
            raise OptionError(f"cut points {list(cuts)} must be increasing and inside (0, 1)",
                                  fix="e.g. --cuts 0.25,0.75")
        if len(self.names) != len(cuts) + 3 or len(set(self.names)) != len(self.names):
            raise OptionError(
                f"{len(cuts)} cut point(s) make {len(cuts) + 3} bands; got names "
                f"{list(self.names)}", fix="give one distinct name per band, 0 and 1 included")

    @classmethod
    def from_cuts(cls, cuts: Sequence[float], names: Sequence[str] | None = None) -> BandScheme:
        cuts = tuple(float(c) for c in cuts)
        if names is None:
            names = (DEFAULT_NAMES if cuts == DEFAULT_CUTS else
                     ("zero", *(f"band{i}" for i in range(1, len(cuts) + 2)), "one"))
        return cls(cuts, tuple(names))

    def segment_bounds(self) -> list[tuple[float, float]]:
        edges = (0.0, *self.cuts, 1.0)
        return list(itertools.pairwise(edges))

    def describe(self) -> list[str]:
        """Human-readable intervals, e.g. ``central: [0.25, 0.75]``."""
        out = [f"{self.names[0]}: p = 0"]
        bounds = self.segment_bounds()
        for i, (lo, hi) in enumerate(bounds):
            left = "[" if i > 0 and self._owner(i - 1) == i else "("
            right = "]" if i < len(bounds) - 1 and self._owner(i) == i else ")"
            out.append(f"{self.names[i + 1]}: {left}{lo:g}, {hi:g}{right}")
        out.append(f"{self.names[-1]}: p = 1")
        return out

    def _owner(self, cut_index: int) -> int:
        """Segment (0-based) that owns cut ``cut_index``: the one whose middle is nearer 0.5."""
        bounds = self.segment_bounds()
        left, right = bounds[cut_index], bounds[cut_index + 1]
        distance = [abs((lo + hi) / 2 - 0.5) for lo, hi in (left, right)]
        return cut_index if distance[0] <= distance[1] else cut_index + 1

    def bounds_of(self, name: str) -> tuple[float, float] | None:
        """The interval of a band (``(0, 0)`` for the zero band), None if no such band."""
        if name not in self.names:
            return None
        index = self.names.index(name)
        if index == 0:
            return (0.0, 0.0)
        if index == len(self.names) - 1:
            return (1.0, 1.0)
        return self.segment_bounds()[index - 1]

    def assign(self, pass_rates: Sequence[float] | np.ndarray) -> list[str | None]:
        """Band name of each pass rate; None for NaN (unmeasured)."""
        p = np.asarray(pass_rates, dtype="float64")
        cuts = np.asarray(self.cuts)
        segment = np.searchsorted(cuts, p, side="left")  # number of cuts < p
        for i, cut in enumerate(self.cuts):
            segment = np.where(np.abs(p - cut) <= _EXACT, self._owner(i), segment)
        index = segment + 1
        index = np.where(p <= _EXACT, 0, index)
        index = np.where(p >= 1 - _EXACT, len(self.names) - 1, index)
        names = np.asarray(self.names, dtype=object)[np.clip(index, 0, len(self.names) - 1)]
        return [None if np.isnan(x) else str(n) for x, n in zip(p, names, strict=True)]

    def band(self, pass_rate: float | None) -> str | None:
        return None if pass_rate is None else self.assign([pass_rate])[0]


DEFAULT_SCHEME = BandScheme()
