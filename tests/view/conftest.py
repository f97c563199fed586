"""A real grading run for the viewer's tests, and a browser to look at it with.

``graded_run`` grades two corpus tasks with ``termgrade grade`` against a scripted
tool-calling endpoint on loopback (no model): on ``word-frequency`` the policy replays
the reference solution (the trials pass); on ``markdown-table-align`` it prints an HTML
``<script>`` and a long output (which the scaffold truncates), then writes the reward
file itself (the grader's integrity checks score it 0 and say why). ``browser`` is
Debian's headless ``chromium`` driven by selenium through ``chromedriver``; tests that
take it skip, with the reason, where either is missing (``scripts/setup.sh`` installs
both).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.scripted_tools import (
    Messages,
    Reply,
    ScriptedToolEndpoint,
    assistant_turns,
    bash_call,
    finish_call,
    solution_command,
    text_of,
)

ROOT = Path(__file__).resolve().parents[2]
PASSING = ROOT / "environments" / "word-frequency"
CHEATING = ROOT / "environments" / "markdown-table-align"
SCRIPT_TEXT = "<script>alert('agent')</script>"
TAMPER = "ln -s /tests/test_outputs.py /app/peek && ls -l /app/peek"
"""A stand-in in the working directory: a symlink into the grader's /tests (it would read
the hidden tests; a finding wherever it lies). A forged reward in /logs would stay in the
agent's container, left out, no finding."""


def run_policy(messages: Messages) -> Reply:
    """Replay the solution on word-frequency; elsewhere print HTML and a long output,
    then forge the reward. Stateless: it reads the task from the user message."""
    task = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    turn = assistant_turns(messages)
    if (PASSING / "instruction.md").read_text().strip()[:200] in task:
        if turn == 0:
            solve = (PASSING / "solution" / "solve.sh").read_text()
            return bash_call(solution_command(solve), content="Running the solution.")
        return finish_call("Done.")
    if turn == 0:
        return bash_call(f"echo \"{SCRIPT_TEXT}\"; seq 1 40000",
                         content=f"Let me print {SCRIPT_TEXT} and count.")
    if turn == 1:
        return bash_call(TAMPER, content="Writing the reward myself.")
    return finish_call("Finished.")


def grade(out: Path, url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TERMGRADE_PROGRESS": "0", "NO_PROXY": "127.0.0.1"}
    return subprocess.run(
        [sys.executable, "-m", "termgrade", "grade", str(PASSING), str(CHEATING), "--model",
         "scripted-tool-stand-in", "--base-url", url, "-k", "2", "-o", str(out), "-w", "2"],
        cwd=out.parent, env=env, text=True, capture_output=True, timeout=900)


@pytest.fixture(scope="module")
def graded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DIR of a real ``termgrade grade`` run: 2 tasks x 2 attempts (see the module doc)."""
    out = tmp_path_factory.mktemp("view-run") / "run"
    with ScriptedToolEndpoint(run_policy) as llm:
        done = grade(out, llm.url)
    assert (out / "trials.jsonl").is_file(), done.stdout + done.stderr
    return out


def chromium_paths() -> tuple[str | None, str | None]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or (
        "/usr/lib/chromium/chromedriver" if Path("/usr/lib/chromium/chromedriver").is_file()
        else None)
    return browser, driver


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium under selenium (skips, saying what is missing, without them)."""
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    binary, driver = chromium_paths()
    if binary is None or driver is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed "
                    "(apt-get install -y chromium chromium-driver; scripts/setup.sh does)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1400,1000", "--no-proxy-server"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    chrome.set_page_load_timeout(60)
    try:
        yield chrome
    finally:
        chrome.quit()
