"""PNG figures of the report, drawn with matplotlib's Agg renderer (no display, no pyplot).

Each function returns the PNG bytes; the caller writes them atomically.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from termgrade.passrates.models import ConfigSummary, CostRow, JaccardOut
from termgrade.passrates.summary import with_config
from termgrade.stats import grpo_weight

DPI = 110


def _figure(width: float, height: float, **adjust: float) -> Any:
    """A figure with fixed margins (automatic layout engines cost seconds on big grids)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    fig.subplots_adjust(**{"left": 0.1, "right": 0.95, "bottom": 0.14, "top": 0.88, **adjust})
    return fig


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def band_span(k: int, band: tuple[float, float]) -> tuple[float, float] | None:
    """The shaded range of a histogram with one bin per rate i/k: from the lower edge of
    the first bin whose rate is in ``band`` (ends included) to the upper edge of the last,
    so no bin straddles the shading; None when no rate i/k is in the band."""
    inside = [i for i in range(k + 1) if band[0] <= i / k <= band[1]]
    if not inside:
        return None
    return (inside[0] - 0.5) / k, (inside[-1] + 0.5) / k


def band_counts(rates: np.ndarray, k: int, band: tuple[float, float]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Tasks per bin (one per rate i/k), split into those whose own rate is in ``band``
    and those outside it: a rate between two bins (fewer than k counted trials) is drawn
    in the nearer bin, in the colour of its own band."""
    edges = np.linspace(-0.5 / k, 1 + 0.5 / k, k + 2)
    central = (rates >= band[0]) & (rates <= band[1])
    inside, _ = np.histogram(rates[central], bins=edges)
    outside, _ = np.histogram(rates[~central], bins=edges)
    return inside, outside


def pass_rate_histograms(labels: pd.DataFrame, order: Sequence[str],
                         band: tuple[float, float] = (0.25, 0.75)) -> bytes:
    """One histogram of per-task pass rates per configuration; one bar per possible rate,
    green for tasks in the band-central range, shaded over whole bins."""
    frame = with_config(labels)
    cols = min(3, max(1, len(order)))
    rows = math.ceil(len(order) / cols) or 1
    fig = _figure(4.0 * cols, 2.8 * rows + 0.4, left=0.06, right=0.98, bottom=0.1, top=0.88,
                  hspace=0.55, wspace=0.25)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, config in zip(axes, order, strict=False):
        data = frame.loc[frame["config"] == config]
        k = max(int(data["k"].max()), 1)
        rates = data["pass_rate"].dropna().to_numpy(dtype=float)
        span = band_span(k, band)
        if span is not None:
            ax.axvspan(*span, color="tab:green", alpha=0.12, lw=0)
        inside, outside = band_counts(rates, k, band)
        x, width = np.arange(k + 1) / k, 0.9 / max(k, 8)
        ax.bar(x, outside, width=width, color="tab:blue")
        ax.bar(x, inside, width=width, bottom=outside, color="tab:green")
        ax.set_title(f"{config} (k={k}, {rates.size} tasks)", fontsize=9)
        ax.set_xlim(-0.08, 1.08)
        ax.set_xlabel("pass rate", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[len(order):]:
        ax.set_visible(False)
    fig.suptitle(f"Per-task pass rates (green: in [{band[0]:g}, {band[1]:g}])", fontsize=10)
    return _png(fig)


def curve_annotations(selected: Mapping[str, Sequence[float]] | None
                      ) -> list[tuple[float, float, str]]:
    """The 4p(1-p) figure's notes, from the user's data only: each chosen set's mean
    pass rate and its tasks' mean weight (none without data; the paper's own figures are
    not the user's)."""
    notes = []
    for name, rates in (selected or {}).items():
        r = np.asarray(rates, dtype=float)
        r = r[np.isfinite(r)]
        if r.size:
            mean = float(r.mean())
            notes.append((mean, float(grpo_weight(mean)),
                          f"{name}: mean p={mean:.2f}, mean weight "
                          f"{float(grpo_weight(r).mean()):.2f}"))
    return notes


def grpo_curve(selected: Mapping[str, Sequence[float]] | None = None,
               band: tuple[float, float] = (0.25, 0.75)) -> bytes:
    """4p(1-p) over [0, 1], the band shaded, chosen tasks marked on the curve and annotated
    (:func:`curve_annotations`)."""
    fig = _figure(6.4, 3.8, left=0.12)
    ax = fig.subplots()
    p = np.linspace(0, 1, 401)
    ax.plot(p, grpo_weight(p), color="black", lw=1.5, label="4p(1-p)")
    ax.axvspan(*band, color="tab:green", alpha=0.12, lw=0,
               label=f"band [{band[0]:g}, {band[1]:g}]")
    for (x, y, text), text_y in zip(curve_annotations(selected), (0.97, 0.8, 0.63, 0.46),
                                     strict=False):
        ax.annotate(text, (x, y), xytext=(0.02, text_y), fontsize=8,
                    arrowprops={"arrowstyle": "->", "lw": 0.6, "color": "0.4"})
    markers = iter(("o", "s", "^", "D", "v"))
    for name, rates in (selected or {}).items():
        r = np.asarray(rates, dtype=float)
        ax.scatter(r, grpo_weight(r), s=14, alpha=0.6, marker=next(markers, "o"),
                   label=f"{name} ({r.size})", zorder=3)
    ax.set_xlabel("pass rate p")
    ax.set_ylabel("relative GRPO weight")
    ax.set_ylim(0, 1.08)
    ax.legend(fontsize=8, loc="lower center")
    ax.set_title("Per-prompt gradient weight 4p(1-p)", fontsize=10)
    return _png(fig)


def pass1_vs_hours(configs: Sequence[ConfigSummary], cost: Sequence[CostRow]) -> bytes:
    """pass@1 (with standard errors) against total trial-hours, log scale."""
    hours = {row.config: row.trial_hours for row in cost}
    fig = _figure(7.0, 4.2, left=0.12, right=0.8)
    ax = fig.subplots()
    for summary in configs:
        x = hours.get(summary.config)
        y = summary.pass_at_1.value
        if not x or y is None:
            continue
        ax.errorbar(x, y, yerr=summary.pass_at_1.se or 0, fmt="o", capsize=3)
        ax.annotate(f"{summary.config} (k={summary.k})", (x, y), xytext=(5, 4),
                    textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.margins(x=0.25, y=0.1)
    ax.set_xlabel("trial-hours (counted trials, log scale)")
    ax.set_ylabel("pass@1")
    ax.grid(alpha=0.3, which="both")
    ax.set_title(cost_title(configs, hours), fontsize=10)
    return _png(fig)


MIN_POINTS_TO_RELATE = 4
"""Configurations below which the cost figure says nothing about how score and cost
relate."""


def cost_title(configs: Sequence[ConfigSummary], hours: Mapping[str, float]) -> str:
    """The cost figure's title: what it plots and, only from enough configurations, their
    rank correlation; never a claim two or three points cannot carry."""
    points = [(hours[c.config], c.pass_at_1.value) for c in configs
              if hours.get(c.config) and c.pass_at_1.value is not None]
    head = f"pass@1 against trial-hours ({len(points)} configuration(s))"
    if len(points) < MIN_POINTS_TO_RELATE:
        return f"{head}: too few to say how score and cost relate"
    from scipy.stats import spearmanr

    rho = float(spearmanr([x for x, _ in points], [y for _, y in points]).statistic)
    return head if math.isnan(rho) else f"{head}: Spearman rho {rho:+.2f}"


def jaccard_heatmap(jaccard: JaccardOut) -> bytes:
    n = len(jaccard.names)
    values = np.array([[np.nan if v is None else v for v in row] for row in jaccard.matrix],
                      dtype=float).reshape(n, n)
    fig = _figure(0.9 * n + 3.4, 0.75 * n + 2.0, left=0.3, right=0.97, bottom=0.22, top=0.9)
    ax = fig.subplots()
    image = ax.imshow(values, vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(n), jaccard.names, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(n), [f"{name} ({size})" for name, size in
                             zip(jaccard.names, jaccard.sizes, strict=True)], fontsize=8)
    for i in range(n):
        for j in range(n):
            if not np.isnan(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if values[i, j] < 0.6 else "black")
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title(f"Jaccard overlap of '{jaccard.band}' task sets "
                 f"({len(jaccard.in_all)} in all)", fontsize=10)
    return _png(fig)
