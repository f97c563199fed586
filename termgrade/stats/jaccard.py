"""Overlap of band-central sets between models (Jaccard index |A & B| / |A | B|)."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass

import numpy as np


def jaccard(a: Set[str], b: Set[str]) -> float | None:
    """|a & b| / |a | b|; None when both are empty (undefined)."""
    union = len(a | b)
    return None if union == 0 else len(a & b) / union


@dataclass(frozen=True)
class JaccardMatrix:
    names: list[str]
    matrix: list[list[float | None]]
    """matrix[i][j] = Jaccard of names[i]'s and names[j]'s sets (1 on the diagonal if any)."""
    sizes: list[int]
    in_all: list[str]
    """Items in every set (tasks band-central for every model)."""
    off_diagonal_min: float | None
    off_diagonal_max: float | None
    max_pair: tuple[str, str] | None
    """The two names with the largest overlap."""


def jaccard_matrix(sets: Mapping[str, Set[str]]) -> JaccardMatrix:
    names = list(sets)
    items = sorted(set().union(*sets.values())) if sets else []
    index = {item: i for i, item in enumerate(items)}
    member = np.zeros((len(items), len(names)), dtype=bool)
    for j, name in enumerate(names):
        member[[index[x] for x in sets[name]], j] = True
    counts = member.astype(np.int64)
    inter = counts.T @ counts
    sizes = counts.sum(axis=0)
    union = sizes[:, None] + sizes[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(union > 0, inter / np.where(union > 0, union, 1), np.nan)
    matrix = [[None if np.isnan(v) else float(v) for v in row] for row in values]
    off = [(values[i, j], names[i], names[j]) for i in range(len(names))
           for j in range(i + 1, len(names)) if not np.isnan(values[i, j])]
    best = max(off, default=None, key=lambda x: x[0])
    in_all = [items[i] for i in np.flatnonzero(member.all(axis=1))] if names else []
    return JaccardMatrix(
        names=names, matrix=matrix, sizes=[int(s) for s in sizes], in_all=in_all,
        off_diagonal_min=float(min(v for v, _, _ in off)) if off else None,
        off_diagonal_max=float(best[0]) if best else None,
        max_pair=(best[1], best[2]) if best else None)
