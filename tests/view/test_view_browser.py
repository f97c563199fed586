"""``termgrade view`` in a real browser: headless Chromium, driven by selenium, clicking
from the grid to a trial and reading what a user sees.

The first test looks at a real grading run (``termgrade grade`` with scripted policies on
loopback, real containers: see ``conftest.graded_run``); the second at a synthetic run
and hand-made hostile trials, without containers. With ``TERMGRADE_VIEW_SCREENSHOTS=DIR``
the first saves the screenshots the docs show (``docs/images/viewer-grid.png``,
``viewer-trial.png``).
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from termgrade.core.errors import DataWarning
from termgrade.view import RunIndex, find_sources, load_run
from termgrade.view.server import ViewServer
from tests.support.view_runs import FINDINGS, SCRIPT, hostile_trial, synthetic_run
from tests.view.conftest import SCRIPT_TEXT


def _index(path: Path) -> RunIndex:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return load_run(find_sources(path))


def _by(kind: str) -> Any:
    from selenium.webdriver.common.by import By

    return getattr(By, kind)


def _cell(browser: Any, task: str) -> Any:
    return browser.find_element(_by("CSS_SELECTOR"), f'td.cell[data-task="{task}"]')


def _shot(browser: Any, tmp: Path, name: str, height: int) -> None:
    browser.set_window_size(1400, height)
    path = tmp / name
    browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    target = os.environ.get("TERMGRADE_VIEW_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / name)


@pytest.mark.docker
@pytest.mark.slow
def test_a_real_grading_run_from_grid_to_trial(graded_run: Path, browser: Any,
                                               tmp_path: Path) -> None:
    index = _index(graded_run)
    assert len(index.trials) == 4
    with ViewServer(index) as server:
        browser.get(server.url)
        assert browser.title == "grid"
        passing, cheating = _cell(browser, "word-frequency"), _cell(browser,
                                                                     "markdown-table-align")
        assert passing.find_element(_by("CLASS_NAME"), "rate").text == "1.00"
        assert "one" in passing.text and "2 counted · 0 lost" in passing.text
        assert cheating.find_element(_by("CLASS_NAME"), "rate").text == "0.00"
        assert "zero" in cheating.text
        summary = browser.find_element(_by("CSS_SELECTOR"), "table.summary").text
        assert "scripted-tool-stand-in" in summary and "0.5000" in summary  # pass@1
        _shot(browser, tmp_path, "viewer-grid.png", 700)
        browser.set_window_size(1400, 1000)

        cheating.find_element(_by("TAG_NAME"), "a").click()
        assert "markdown-table-align" in browser.find_element(_by("TAG_NAME"), "h1").text
        links = browser.find_elements(_by("CLASS_NAME"), "trial-link")
        assert len(links) == 2
        assert "integrity finding (tamper)" in browser.find_element(
            _by("CSS_SELECTOR"), "table.trials").text
        links[0].click()

        assert "__markdown-table-align__scripted-tool-stand-in__a0" in browser.find_element(
            _by("TAG_NAME"), "h1").text  # after the run's id
        facts = browser.find_element(_by("CSS_SELECTOR"), "table.facts").text
        assert "integrity finding (tamper)" in facts
        assert "integrity findings: A /app/peek" in facts
        findings = browser.find_elements(_by("CSS_SELECTOR"), "ul.findings li")
        assert [f.text for f in findings] == [
            "A /app/peek: a symlink that resolves into the grader's /tests"]
        tests = browser.find_elements(_by("CSS_SELECTOR"), "table.tests tbody tr")
        assert len(tests) == 22 and all(
            t.find_elements(_by("TAG_NAME"), "td")[1].text == "failed" for t in tests)
        calls = browser.find_elements(_by("CLASS_NAME"), "tool-call")
        assert [c.find_element(_by("CLASS_NAME"), "tool-name").text for c in calls] == [
            "bash", "bash", "finish"]
        assert "seq 1 40000" in calls[0].text
        assistant = browser.find_elements(_by("CSS_SELECTOR"), ".msg.role-assistant")
        assert [a.find_element(_by("TAG_NAME"), "b").text for a in assistant] == [
            "assistant · turn 1", "assistant · turn 2", "assistant · turn 3"]
        outputs = browser.find_elements(_by("CSS_SELECTOR"), ".msg.role-tool")
        assert SCRIPT_TEXT in outputs[0].text  # the agent's HTML, shown as text
        cut = outputs[0].find_element(_by("CLASS_NAME"), "truncated")
        assert cut.text.startswith("[output truncated: 212942 of 228942 characters omitted")
        assert "__markdown-table-align__" in browser.title  # no script ran
        _shot(browser, tmp_path, "viewer-trial.png", 1100)


@pytest.mark.docker
@pytest.mark.slow
def test_a_real_near_miss_shows_what_its_failure_said(tmp_path: Path, browser: Any) -> None:
    from termgrade.trialsets.io import write_trials
    from tests.support.near_miss import SLIP, near_miss_record

    write_trials(tmp_path / "run" / "trials.jsonl", [near_miss_record()])
    with ViewServer(_index(tmp_path / "run")) as server:
        browser.get(server.url + "trials?near_miss=1")
        said = browser.find_element(_by("CSS_SELECTOR"), "details.said")
        assert said.find_element(_by("TAG_NAME"), "summary").text == SLIP
        said.click()  # one click away
        assert "assert 1 == 2" in said.text
        browser.find_element(_by("CLASS_NAME"), "trial-link").click()
        failed = [r for r in browser.find_elements(_by("CSS_SELECTOR"), "table.tests tbody tr")
                  if "failed" in r.text]
        assert len(failed) == 1 and SLIP in failed[0].text
        assert "assert 1 == 2" in failed[0].find_element(_by("TAG_NAME"), "summary").text


@pytest.mark.docker
@pytest.mark.slow
def test_the_grid_panel_shows_near_misses_per_model(tmp_path: Path, browser: Any) -> None:
    """The real near-miss trial, and the same trial relabelled as a second model (a copy,
    named as one): per model its near-misses and an example whose failure is one click
    away, the most-failed test across both models with its message, the distribution of
    failing-test counts, and a link to each model's near-miss trials."""
    from termgrade.trialsets.io import write_trials
    from tests.support.near_miss import SLIP, near_miss_record

    real = near_miss_record()
    copy = real.model_copy(update={"model": "copy-of-the-stand-in",
                                   "trial_id": real.trial_id + "-copy"})
    write_trials(tmp_path / "run" / "trials.jsonl", [real, copy])
    with ViewServer(_index(tmp_path / "run")) as server:
        browser.get(server.url)
        panel = browser.find_element(_by("CSS_SELECTOR"), "section.near-misses")
        assert "2 of 2" in panel.text
        models = panel.find_elements(_by("CSS_SELECTOR"), "table.near-models tbody tr")
        assert len(models) == 2 and all("1 / 1" in m.text for m in models)
        said = models[0].find_element(_by("CSS_SELECTOR"), "details.said")
        assert said.find_element(_by("TAG_NAME"), "summary").text == SLIP
        assert said.get_attribute("open") is None  # closed until clicked
        said.click()  # one click away
        assert said.get_attribute("open") == "true" and "assert 1 == 2" in said.text
        [test] = panel.find_elements(_by("CSS_SELECTOR"), "table.near-tests tbody tr")
        assert test.find_elements(_by("TAG_NAME"), "td")[1].text == "2"  # across models
        test.find_element(_by("TAG_NAME"), "summary").click()
        assert "assert 1 == 2" in test.text
        [count] = panel.find_elements(_by("CSS_SELECTOR"), "table.failing-counts tbody tr")
        assert [c.text for c in count.find_elements(_by("TAG_NAME"), "td")] == ["1", "2"]
        [copied] = [m for m in models if "copy-of-the-stand-in" in m.text]
        copied.find_element(_by("CLASS_NAME"), "near-trials").click()
        assert "1 trial(s) match" in browser.find_element(_by("CLASS_NAME"), "matches").text
        assert "copy-of-the-stand-in" in browser.find_element(
            _by("CSS_SELECTOR"), "table.trials").text
        browser.get(server.url)
        browser.find_element(_by("CSS_SELECTOR"),
                             "section.near-misses table.near-models a.trial-link").click()
        failed = [r for r in browser.find_elements(_by("CSS_SELECTOR"), "table.tests tbody tr")
                  if "failed" in r.text]
        assert len(failed) == 1 and SLIP in failed[0].text


def test_clicking_through_a_synthetic_run_and_hostile_trials(tmp_path: Path,
                                                             browser: Any) -> None:
    run = synthetic_run(tmp_path / "run", tasks=60)
    with (run / "trials.jsonl").open("a") as handle:
        handle.write(hostile_trial(0).model_dump_json() + "\n")
    index = _index(run)
    with ViewServer(index) as server:
        browser.get(server.url)
        assert "page 1 of 2" in browser.find_element(_by("CLASS_NAME"), "pager").text
        browser.find_element(_by("CSS_SELECTOR"), 'a[rel="next"]').click()
        rows = browser.find_elements(_by("CSS_SELECTOR"), "table.grid tbody tr")
        assert rows[0].get_attribute("data-task") == "synthetic-task-0050"
        assert rows[-1].get_attribute("data-task") == "synthetic-task-0060"
        # filter: integrity failures only -> the hostile task alone
        browser.get(server.url + "?reason=integrity")
        rows = browser.find_elements(_by("CSS_SELECTOR"), "table.grid tbody tr")
        assert [r.get_attribute("data-task") for r in rows] == ["hostile-task"]
        _cell(browser, "hostile-task").find_element(_by("TAG_NAME"), "a").click()
        browser.find_element(_by("CLASS_NAME"), "trial-link").click()
        body = browser.find_element(_by("TAG_NAME"), "main").text
        assert SCRIPT in body  # as text
        assert browser.title == hostile_trial(0).trial_id  # the agent's script never ran
        assert [li.text for li in browser.find_elements(
            _by("CSS_SELECTOR"), "ul.findings li")] == list(FINDINGS)
        # a synthetic trial page: the episode, step by step
        browser.get(server.url + "trials?reason=tests_failed&near_miss=1")
        browser.find_element(_by("CLASS_NAME"), "trial-link").click()
        assert "near-miss" in browser.find_element(_by("CSS_SELECTOR"), "table.facts").text
        assert browser.find_elements(_by("CSS_SELECTOR"), ".msg")
