"""``termgrade view --out DIR``: the viewer as static HTML files, no server needed.

The same pages the server renders, with file links (:class:`~termgrade.view.links.
StaticLinks`): ``index.html`` and the grid's other pages, the trial lists, one page per
cell (``cell/N.html``) and per trial (``trial/N.html``, with its record as
``trial/N.json``). A static page cannot take a query, so the grid and trial lists are
written unfiltered and under each single filter (one band, split, reason, configuration,
or near-misses); combining filters needs the server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from termgrade.core.errors import OutputError
from termgrade.core.progress import track
from termgrade.view.filters import Filters, paginate
from termgrade.view.index import RunIndex
from termgrade.view.links import StaticLinks, static_name
from termgrade.view.pages import cell_page, filter_choices, grid_page, trials_page
from termgrade.view.trial_page import trial_json, trial_page


@dataclass
class ExportSummary:
    out: Path
    pages: int


def single_filters(index: RunIndex) -> Iterator[Filters]:
    """No filter, then every one-filter view the static pages link to."""
    yield Filters()
    for name, values in filter_choices(index).items():
        for value, _ in values:
            yield Filters.single(name, value)
    yield Filters(near_miss=True)


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(out, "exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise OutputError(out, "is a folder that holds other files (not an earlier export)",
                          fix="choose an empty or new folder for --out")


def export_static(index: RunIndex, out: Path) -> ExportSummary:
    """Write every page under ``out``; returns how many files were written."""
    out = Path(out)
    _check_out(out)
    (out / "cell").mkdir(parents=True, exist_ok=True)
    (out / "trial").mkdir(parents=True, exist_ok=True)
    top, below = StaticLinks(0), StaticLinks(1)
    written = 0

    def write(name: str, text: str) -> None:
        nonlocal written
        (out / name).write_text(text, encoding="utf-8")
        written += 1

    lists: list[tuple[str, Callable[[Filters], int]]] = [
        ("grid", lambda f: len(set(index.cells.loc[f.cell_mask(index.cells), "task_id"]))),
        ("trials", lambda f: int(f.trial_mask(index.trials, index.cells).sum())),
    ]
    for filters in single_filters(index):
        for kind, count in lists:
            pages = paginate(count(filters), 1).count
            render = grid_page if kind == "grid" else trials_page
            for number in range(1, pages + 1):
                write(static_name(kind, filters, number), render(index, filters, number, top))
    for row in range(len(index.cells)):
        write(f"cell/{row}.html", cell_page(index, row, below))
    with track("writing trial pages", total=len(index.trials)) as bar:
        for row in range(len(index.trials)):
            write(f"trial/{row}.html", trial_page(index, row, below))
            write(f"trial/{row}.json", trial_json(index, row))
            bar.advance()
    return ExportSummary(out=out, pages=written)
