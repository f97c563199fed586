"""Figures (PNG, rendered headless and byte-for-byte reproducible): the shared
:func:`pyplot` / :func:`save_figure` that every stage's charts are drawn with (the dataset
cards' in :mod:`termgrade.builders.figures`, training's in :mod:`termgrade.training.monitor`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    pyplot().close(fig)
