"""The dataset cards' charts (PNG under the staged repo's figures/): pass rates per model,
tasks by domain and difficulty, bars; drawn with :mod:`termgrade.core.figures`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from termgrade.core.figures import pyplot, save_figure
from termgrade.task.config import difficulty_key


def pass_rate_histogram(rates: dict[str, list[float]], path: Path) -> None:
    """Per model, how many tasks have each pass rate (bins centred on multiples of 1/8,
    so k = 8 and k = 2 rates each fall in their own bin)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    bins = [(i - 0.5) / 8 for i in range(10)]
    for model, values in sorted(rates.items()):
        ax.hist(values, bins=bins, histtype="step", linewidth=1.6, label=model)
    ax.set_xlabel("pass rate (task x model)")
    ax.set_ylabel("tasks")
    ax.set_title("Measured pass rates per model")
    if rates:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    save_figure(fig, path)


def domain_difficulty_bars(pairs: Sequence[tuple[str, str]], path: Path) -> None:
    """Tasks per domain, stacked by authored difficulty."""
    plt = pyplot()
    counts = Counter(pairs)
    domains = sorted({d for d, _ in pairs}, reverse=True)
    levels = sorted({lvl for _, lvl in pairs}, key=difficulty_key)
    fig, ax = plt.subplots(figsize=(7.5, max(2.5, 0.35 * len(domains) + 1)))
    left = [0] * len(domains)
    for level in levels:
        widths = [counts[(d, level)] for d in domains]
        ax.barh(domains, widths, left=left, label=level)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlabel("tasks")
    ax.set_title("Tasks by domain and difficulty")
    if levels:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    save_figure(fig, path)


def bar_chart(values: dict[str, float], path: Path, *, title: str, xlabel: str) -> None:
    plt = pyplot()
    names = sorted(values)
    fig, ax = plt.subplots(figsize=(7, max(2.5, 0.35 * len(names) + 1)))
    ax.barh(names, [values[n] for n in names])
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    save_figure(fig, path)
