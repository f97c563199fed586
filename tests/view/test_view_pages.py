"""The pages as a browser gets them: escaped, paged, linked; served and exported."""

from __future__ import annotations

import html
import json
import re
import urllib.error
import urllib.request
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.cli.app import app
from termgrade.core.errors import DataWarning, OutputError
from termgrade.view import RunIndex, find_sources, load_run
from termgrade.view.export import export_static
from termgrade.view.filters import Filters
from termgrade.view.links import ServerLinks
from termgrade.view.pages import grid_page
from termgrade.view.server import ViewServer
from tests.support.view_runs import FINDINGS, SCRIPT, hostile_run, synthetic_run


def _index(path: Path) -> RunIndex:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return load_run(find_sources(path))


def _get(url: str) -> tuple[int, str, dict[str, str]]:
    try:
        with urllib.request.urlopen(url) as answer:
            return answer.status, answer.read().decode(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def test_agent_written_html_renders_as_text(tmp_path: Path) -> None:
    index = _index(hostile_run(tmp_path / "run"))
    with ViewServer(index) as server:
        status, page, headers = _get(server.url + "trial/0")
    assert status == 200
    assert "script-src" not in headers["Content-Security-Policy"]
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert "<script" not in page.lower()
    escaped = html.escape(SCRIPT, quote=True)
    assert escaped == "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;"
    assert page.count(escaped) >= 5  # task, assistant text, tool call, tool output, test
    for finding in FINDINGS:
        assert f'<li class="finding">{finding}</li>' in page
    assert '<span class="truncated">[output truncated:' in page
    assert "arguments (not valid JSON)" in page
    assert "integrity finding (tamper)" in page


def test_trial_page_says_what_each_failure_said(tmp_path: Path) -> None:
    index = _index(hostile_run(tmp_path / "run"))
    with ViewServer(index) as server:
        _, page, _ = _get(server.url + "trial/0")
    said = html.escape(f"AssertionError: rows {SCRIPT}", quote=True)
    assert f"<summary>{said}</summary>" in page
    assert "assert 0 == 3" in page and "parsed 0 rows" in page and "0.50 s" in page


def test_long_texts_are_cut_with_a_notice(tmp_path: Path) -> None:
    from termgrade.view.html import VIEW_CHARS, clipped

    shown = clipped("a" * (VIEW_CHARS * 3))
    assert "viewer: 40,000 of 60,000 characters not shown" in shown
    assert len(shown) < VIEW_CHARS + 500


def test_served_grid_pages_filters_and_links(tmp_path: Path) -> None:
    index = _index(synthetic_run(tmp_path / "run", tasks=120, transcripts=False))
    with ViewServer(index) as server:
        status, grid, _ = _get(server.url)
        assert status == 200
        assert "page 1 of 3" in grid
        rows = re.findall(r'<tr data-task="([^"]+)">', grid)
        assert rows == sorted(rows) and len(rows) == 50
        assert grid.count('<svg class="spark"') == 100
        central = _get(server.url + "?band=central")[1]
        shown = set(re.findall(r'data-band="([a-z]+)"><a', central))
        dimmed = set(re.findall(r'class="cell band-(\w+) dim"', central))
        assert "central" in shown and "central" not in dimmed
        for path in ("?page=3", "trials?reason=tests_failed&near_miss=1", "cell/0",
                     "trial/1", "api/summary", "api/grid?page=2", "api/trials?page=2",
                     "api/trial/1"):
            assert _get(server.url + path)[0] == 200, path
        assert _get(server.url + "trial/999999")[0] == 404
        assert _get(server.url + "elsewhere")[0] == 404
        api = json.loads(_get(server.url + "api/grid?band=zero")[1])
        assert api["cells"] and {c["band"] for c in api["cells"]} == {"zero"}
        trials = json.loads(_get(server.url + "api/trials?reason=tests_failed&near_miss=1")[1])
        assert trials["trials"] and all(t["near_miss"] and t["reason"] == "tests_failed"
                                        for t in trials["trials"])
        assert len(trials["trials"]) <= 50


def test_static_export_links_resolve(tmp_path: Path) -> None:
    index = _index(hostile_run(tmp_path / "run"))
    out = tmp_path / "site"
    summary = export_static(index, out)
    assert summary.pages > 5
    assert (out / "index.html").is_file() and (out / "trial" / "0.html").is_file()
    missing = []
    for page in out.rglob("*.html"):
        for href in re.findall(r'href="([^"]+)"', page.read_text()):
            if not (page.parent / href).resolve().is_file():
                missing.append(f"{page.name} -> {href}")
    assert not missing, missing[:5]
    assert "<script" not in (out / "trial" / "0.html").read_text().lower()
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    with pytest.raises(OutputError, match="holds other files"):
        export_static(index, tmp_path / "busy")


def test_the_cli_exports_and_refuses_bad_input(tmp_path: Path) -> None:
    run = hostile_run(tmp_path / "run")
    done = CliRunner().invoke(app, ["view", str(run), "--out", str(tmp_path / "site")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "site" / "index.html").is_file()
    bad = CliRunner().invoke(app, ["view", str(tmp_path / "nowhere")])
    assert bad.exit_code == 1
    assert "does not exist" in bad.output and "fix:" in bad.output


def test_grid_shows_what_the_index_holds(tmp_path: Path) -> None:
    index = _index(hostile_run(tmp_path / "run"))
    page = grid_page(index, Filters(), 1, ServerLinks())
    assert "hostile-task" in page and "0.33" in page  # 1 of 3 counted trials passed
    assert "3 counted · 0 lost" in page


def test_the_cli_serves_on_loopback_and_prints_the_url(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    run = hostile_run(tmp_path / "run")
    env = {**os.environ, "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1"}
    served = subprocess.Popen([sys.executable, "-m", "termgrade", "view", str(run)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env, cwd=Path(__file__).resolve().parents[2])
    try:
        assert served.stdout is not None
        url = served.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url), url
        status, page, _ = _get(url)
        assert status == 200 and "hostile-task" in page
    finally:
        served.terminate()
        served.wait(30)


def test_attested_and_unattested_pass_rates_are_shown_apart(tmp_path: Path) -> None:
    """Issue 44, item 12: the grid's summary gave one pooled pass@1 (0.75) over a vouched
    0.5 and test.sh's own 1.0; it now gives each apart and marks the unattested cell."""
    from tests.support.labels import trial, write_jsonl

    rows = [trial("a", "m", attempt=i, passed=i == 0, attested=True) for i in range(2)]
    rows += [trial("b", "m", attempt=i, passed=True, attested=False) for i in range(2)]
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "trials.jsonl", rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        index = load_run(find_sources(run), include_unattested=True)
    (config,) = index.configs
    assert config.pass_at_1.value == 0.75
    page = grid_page(index, Filters(), 1, ServerLinks())
    summary = page.split('<table class="summary">')[1].split("</table>")[0]
    assert "attested 0.5000" in summary and "unattested 1.0000" in summary, summary
    cell_b = page.split('data-task="b" data-config="m"')[1].split("</td>")[0]
    assert "unattested" in cell_b
    cell_a = page.split('data-task="a" data-config="m"')[1].split("</td>")[0]
    assert "unattested" not in cell_a
    out = tmp_path / "site"
    result = CliRunner().invoke(app, ["view", str(run), "--include-unattested", "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    assert "unattested 1.0000" in (out / "index.html").read_text()
