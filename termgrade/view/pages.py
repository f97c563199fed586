"""The grid, cell and trial-list pages (the trial page is :mod:`.trial_page`).

The grid is tasks x configurations: each cell shows the pass rate and band of the label,
counted and lost trials, median turns and tokens of counted trials, and a sparkline of
rewards in attempt order. Above it: one summary row per configuration (pass@1 and band
counts exactly as the report computes them, near-misses as its near-miss section does)
and the filters. Every page is a function of the index, the filters and a page number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from termgrade.passrates.models import PassAtKOut
from termgrade.view.filters import Filters, Page, paginate
from termgrade.view.html import compact, esc, missing, num, page, rate, sparkline, table
from termgrade.view.index import RunIndex
from termgrade.view.links import Links
from termgrade.view.near_miss_panel import near_miss_panel
from termgrade.view.reasons import LABELS


def _pk(value: float | None, se: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" + ("" if se is None else f" ± {se:.4f}")


ATTESTATION_NOTE = (
    "pass@1 by attestation: attested tasks were scored from the grader's signed record, "
    "unattested ones by test.sh's own reward (an agent that games such a verifier is not "
    "caught), unrecorded ones say neither (ingests, older files); the pooled pass@1 mixes "
    "them.")


def _by_attestation(stats: dict[str, PassAtKOut]) -> str:
    """``attested 0.5000 ± 0.1 (12 tasks)`` lines, one per kind present."""
    return "<br>".join(
        f'<span class="attestation-{esc(kind)}">{esc(kind)} {_pk(s.value, s.se)} '
        f"({s.n_tasks} task{'s' if s.n_tasks != 1 else ''})</span>"
        for kind, s in stats.items()) or "-"


def summary_table(index: RunIndex) -> str:
    bands = list(index.scheme.names)
    near = {row.config: row.n_near_miss for row in index.near_misses.rows}
    rows = []
    for c in index.configs:
        cells = [esc(c.config), str(c.k), f"{c.n_measured}/{c.n_tasks}",
                 num(c.n_counted_trials), _pk(c.pass_at_1.value, c.pass_at_1.se),
                 _by_attestation(c.pass_at_1_by_attestation),
                 num(near.get(c.config, 0)), *(str(c.bands.get(b, 0)) for b in bands)]
        rows.append(f'<tr data-config="{esc(c.config)}">'
                    + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
    return table(["config", "k", "measured", "counted trials", "pass@1",
                  "pass@1 by attestation", "near-misses", *bands], rows, "summary") \
        + f'<p class="meta">{esc(ATTESTATION_NOTE)}</p>'


def _options(name: str, values: Sequence[tuple[str, str]], chosen: str | None) -> str:
    opts = ['<option value="">any</option>']
    opts += [f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(label)}'
             "</option>" for v, label in values]
    return f'<label>{esc(name)} <select name="{esc(name)}">{"".join(opts)}</select></label> '


def filter_choices(index: RunIndex) -> dict[str, list[tuple[str, str]]]:
    splits = sorted({s for s in index.cells["split"] if isinstance(s, str)})
    return {"band": [(b, b) for b in index.scheme.names],
            "split": [(s, s) for s in splits],
            "reason": list(LABELS.items()),
            "config": [(c, c) for c in index.config_order]}


def filter_bar(index: RunIndex, filters: Filters, links: Links, kind: str = "grid") -> str:
    """A GET form on the server; in a static export, one link per single filter."""
    target = links.grid if kind == "grid" else links.trials
    choices = filter_choices(index)
    if not links.static:
        fields = "".join(_options(name, values, getattr(filters, name))
                         for name, values in choices.items() if values)
        checked = " checked" if filters.near_miss else ""
        action = "/" if kind == "grid" else "/trials"
        return (f'<form class="filters" method="get" action="{action}">{fields}'
                f'<label><input type="checkbox" name="near_miss" value="1"{checked}> '
                'near-miss</label> <button type="submit">filter</button> '
                f'<a href="{esc(target(Filters()))}">clear</a></form>')
    parts = [f'<a href="{esc(target(Filters()))}">all</a>']
    for name, values in choices.items():
        links_ = " ".join(f'<a href="{esc(target(Filters.single(name, v)))}">{esc(label)}</a>'
                          for v, label in values)
        if links_:
            parts.append(f"<span>{esc(name)}: {links_}</span>")
    parts.append(f'<a href="{esc(target(Filters(near_miss=True)))}">near-miss</a>')
    return f'<div class="filters">{" | ".join(parts)}</div>'


def pager(p: Page, filters: Filters, link: Callable[[Filters, int], str]) -> str:
    items = []
    if p.number > 1:
        items.append(f'<a rel="prev" href="{esc(link(filters, p.number - 1))}">previous</a>')
    items.append(f"<span>page {p.number} of {p.count}</span>")
    if p.number < p.count:
        items.append(f'<a rel="next" href="{esc(link(filters, p.number + 1))}">next</a>')
    return f'<div class="pager">{" ".join(items)}</div>'


def _cell(index: RunIndex, row: int, cell: dict[str, Any], matches: bool, links: Links) -> str:
    spark = sparkline(index.rewards(cell["task_id"], cell["model"], cell["scaffold"]))
    band = cell["band"] if isinstance(cell["band"], str) else "unmeasured"
    meta = (f'{cell["n_counted"]} counted · {cell["n_lost"]} lost<br>'
            f'{num(cell["median_turns"], 0)} turns · {compact(cell["median_tokens"])} tok')
    near = f' · {cell["n_near_miss"]} near-miss' if cell["n_near_miss"] else ""
    if cell.get("attested") is False:
        near += ' · <span class="unattested">unattested (test.sh\'s own reward)</span>'
    dim = "" if matches else " dim"
    return (f'<td class="cell band-{esc(band)}{dim}" data-task="{esc(cell["task_id"])}" '
            f'data-config="{esc(cell["config"])}" data-band="{esc(band)}">'
            f'<a href="{esc(links.cell(row))}"><span class="rate">{rate(cell["pass_rate"])}'
            f'</span> <span class="band">{esc(band)}</span><br>{spark}<br>'
            f'<span class="meta">{meta}{near}</span></a></td>')


def grid_page(index: RunIndex, filters: Filters, number: int, links: Links) -> str:
    cells = index.cells
    mask = filters.cell_mask(cells)
    tasks = sorted(cells.loc[mask, "task_id"].unique())
    p = paginate(len(tasks), number)
    shown = set(tasks[p.start:p.stop])
    on_page = cells[cells["task_id"].isin(shown)]
    by_task: dict[str, dict[str, str]] = {}
    matched = mask[on_page.index].to_numpy()
    for row, cell, hit in zip(on_page.index, on_page.to_dict("records"), matched, strict=True):
        by_task.setdefault(cell["task_id"], {})[cell["config"]] = _cell(
            index, int(row), cell, bool(hit), links)
    order = index.config_order
    splits = dict(zip(cells["task_id"], cells["split"], strict=True))
    rows = []
    for task in tasks[p.start:p.stop]:
        split = splits.get(task)
        label = esc(task) + (f'<br><span class="meta">{esc(split)}</span>'
                             if isinstance(split, str) else "")
        rows.append(f'<tr data-task="{esc(task)}"><th>{label}</th>'
                    + "".join(by_task.get(task, {}).get(c, "<td>-</td>") for c in order)
                    + "</tr>")
    n_trials = int(filters.trial_mask(index.trials, cells).sum())
    issues = "".join(f"<li>{esc(i)}</li>" for i in index.issues)
    body = (f"<h1>Grading run</h1><p>{esc(', '.join(map(str, index.sources.trials)))}"
            f" · labels {esc(index.sources.labels_said())}</p>"
            + summary_table(index) + near_miss_panel(index, links)
            + filter_bar(index, filters, links)
            + f'<p class="matches">{len(tasks):,} task(s), {int(mask.sum()):,} cell(s) match; '
            f'<a href="{esc(links.trials(filters))}">{n_trials:,} trial(s)</a></p>'
            + pager(p, filters, links.grid)
            + table(["task", *order], rows, "grid") + pager(p, filters, links.grid)
            + (f"<h2>Data issues</h2><ul>{issues}</ul>" if issues else ""))
    return page("grid", body, home=links.home())


def trial_rows(index: RunIndex, rows: pd.DataFrame, links: Links, *,
               with_task: bool = True) -> list[str]:
    out = []
    for number, t in zip(rows.index, rows.to_dict("records"), strict=True):
        reason = str(t["reason"])
        first = (f'<td>{esc(t["task_id"])}</td><td>{esc(t["config"])}</td>'
                 if with_task else "")
        tests = ("-" if missing(t["n_tests_passed"]) else
                 f'{num(t["n_tests_passed"])} / {num(t["n_tests_failed"])}')
        out.append(
            f'<tr data-trial="{esc(t["trial_id"])}">{first}'
            f'<td><a class="trial-link" href="{esc(links.trial(int(number)))}">'
            f'{esc(t["trial_id"])}</a></td><td class="num">{t["attempt"]}</td>'
            f'<td class="num">{t["retry_index"]}</td><td class="num">{rate(t["reward"])}</td>'
            f'<td class="reason-{esc(reason)}">{esc(LABELS.get(reason, reason))}'
            f'{" · near-miss" if t["near_miss"] else ""}</td><td>{tests}</td>'
            f'<td>{_one_failed(t)}</td>'
            f'<td class="num">{num(t["turns"])}</td>'
            f'<td class="num">{compact(t["input_tokens"])} / {compact(t["output_tokens"])}</td>'
            f'<td class="num">{num(t["duration_s"], 1)}</td></tr>')
    return out


def _one_failed(t: Any) -> str:
    """The one failed test's name; what its failure said one click away when recorded."""
    if missing(t["failed_test"]):
        return ""
    said = t.get("failed_message")
    if missing(said):
        return esc(t["failed_test"])
    return (f'<details class="said"><summary>{esc(t["failed_test"])}</summary>'
            f'{esc(str(said).partition(": ")[2] or said)}</details>')


TRIAL_HEADER = ["trial", "attempt", "retry", "reward", "reason", "tests passed / failed",
                "the one failed test", "turns", "tokens in / out", "seconds"]


def trials_page(index: RunIndex, filters: Filters, number: int, links: Links) -> str:
    mask = filters.trial_mask(index.trials, index.cells)
    matching = index.trials[mask]
    p = paginate(len(matching), number)
    rows = trial_rows(index, matching.iloc[p.start:p.stop], links)
    body = ("<h1>Trials</h1>" + filter_bar(index, filters, links, "trials")
            + f'<p class="matches">{len(matching):,} trial(s) match</p>'
            + pager(p, filters, links.trials)
            + table(["task", "config", *TRIAL_HEADER], rows, "trials")
            + pager(p, filters, links.trials))
    return page("trials", body, home=links.home())


def cell_page(index: RunIndex, row: int, links: Links) -> str:
    cell = index.cells.iloc[row]
    trials = index.cell_trials(cell["task_id"], cell["model"], cell["scaffold"])
    facts = [("task", cell["task_id"]), ("model", cell["model"]),
             ("scaffold", cell["scaffold"]), ("pass rate", rate(cell["pass_rate"])),
             ("band", cell["band"] if isinstance(cell["band"], str) else "unmeasured"),
             ("counted", f'{cell["n_counted"]} of k={cell["k"]} ({cell["n_passed"]} passed)'),
             ("lost (not counted)", cell["n_lost"]), ("near-misses", cell["n_near_miss"]),
             ("split", cell["split"] if isinstance(cell["split"], str) else "-"),
             ("attested", {True: "yes (the grader's signed record)",
                           False: "no (scored by test.sh's own reward)"}.get(
                               cell["attested"], "unrecorded"))]
    dl = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts)
    body = (f'<h1>{esc(cell["task_id"])} × {esc(cell["config"])}</h1>'
            f'<table class="facts">{dl}</table>'
            + table(TRIAL_HEADER, trial_rows(index, trials, links, with_task=False), "trials"))
    return page(f'{cell["task_id"]} × {cell["config"]}', body, home=links.home())
