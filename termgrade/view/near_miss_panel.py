"""The grid page's near-miss panel: per model, the trials that failed one test while passing
many; the tests that fail most often across models; the distribution of failing-test counts.

Every figure is the report's (:func:`termgrade.passrates.trialstats.near_misses`, kept on
the index as ``index.near_misses``), so ``report`` and ``view`` agree. What a failure said
is one click away (a ``details`` element), and each model's example links to its trial
page and each model's count to its near-miss trials.
"""

from __future__ import annotations

from termgrade.passrates.models import NearMisses, NearMissExample
from termgrade.view.filters import Filters
from termgrade.view.html import esc, num, rate, table
from termgrade.view.index import RunIndex
from termgrade.view.links import Links


def _said(name: str | None, message: str | None) -> str:
    """A test's name; what its failure said one click away (``name: message`` shown without
    the name)."""
    if not name:
        return "-"
    if not message:
        return esc(name)
    text = message.partition(": ")[2] if message.startswith(f"{name}: ") else message
    return (f'<details class="said"><summary>{esc(name)}</summary>{esc(text)}</details>')


def _example(index: RunIndex, example: NearMissExample | None, links: Links) -> str:
    if example is None:
        return "-"
    rows = index.trials.index[index.trials["trial_id"] == example.trial_id]
    trial = (f'<a class="trial-link" href="{esc(links.trial(int(rows[0])))}">'
             f'{esc(example.task_id)}</a>' if len(rows) else esc(example.task_id))
    return (f"{trial} ({example.n_tests_passed} passed) "
            + _said(example.failed_test, example.failed_message))


def _count_link(index: RunIndex, config: str, count: int, links: Links) -> str:
    if not count:
        return "0"
    # a static export has pages for single filters only: there, all near-misses
    chosen = Filters(near_miss=True) if links.static else Filters(near_miss=True,
                                                                  config=config)
    return f'<a class="near-trials" href="{esc(links.trials(chosen))}">{num(count)}</a>'


def near_miss_panel(index: RunIndex, links: Links) -> str:
    """The panel's HTML; empty when the run has no counted trial."""
    near: NearMisses = index.near_misses
    if not near.n_counted:
        return ""
    per_model = [f'<tr data-config="{esc(row.config)}"><td>{esc(row.config)}</td>'
                 f'<td class="num">{_count_link(index, row.config, row.n_near_miss, links)}'
                 f' / {num(row.n_counted)}</td><td class="num">{rate(row.share)}</td>'
                 f"<td>{_example(index, row.example, links)}</td></tr>"
                 for row in near.rows]
    messages = dict(near.top_failed_messages)
    tests = [f'<tr><td>{_said(name, messages.get(name))}</td><td class="num">{num(n)}</td>'
             "</tr>" for name, n in near.top_failed_tests]
    counts = [f'<tr><td class="num">{k}{"+" if k >= 10 else ""}</td>'
              f'<td class="num">{num(n)}</td></tr>' for k, n in near.failing_counts]
    return (f'<section class="near-misses"><h2>Near-misses</h2>'
            f"<p>Counted trials that failed exactly one test while passing at least "
            f"{near.min_passed}: {num(near.total)} of {num(near.n_counted)} "
            f"({rate(near.share)}).</p>"
            + table(["config", "near-misses / counted", "share", "example (what failed)"],
                    per_model, "near-models")
            + ("<h3>Tests that fail most often in near-misses, across models</h3>"
               + table(["test (what it said)", "near-miss trials"], tests, "near-tests")
               if tests else "")
            + ("<h3>Failed trials by tests failed</h3>"
               + table(["tests failed", "trials"], counts, "failing-counts")
               if counts else "")
            + "</section>")
