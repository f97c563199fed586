"""Really running Harbor on our word-frequency task, then ingesting what it wrote.

Harbor comes from the session-scoped ``harbor`` fixture (tests/conftest.py,
tests/support/harbor.py): scripts/ensure_harbor.sh's Python 3.12 venv at .venv-harbor and
docker compose v2, run with ``HARBOR_TELEMETRY=0``. The task image starts FROM
termgrade/base:local, which Harbor builds against with ``pull_policy: build``, so nothing
is pulled.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from termgrade.ingest import Layout, ingest_harbor
from tests.support.harbor import Harbor
from tests.support.scripted_llm import WORD_FREQUENCY_REPLIES, ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
TASK = "environments/word-frequency"

pytestmark = pytest.mark.harbor


def _run(harbor: Harbor, jobs: Path, job: str, *args: str,
         env: dict[str, str] | None = None) -> Path:
    done = harbor.run(["run", "-y", "-n", "1", "-p", TASK, "-o", str(jobs), "--job-name", job,
                       *args], cwd=ROOT, timeout=900,
                      env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})})
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return jobs / job


def test_harbor_runs_with_telemetry_off(harbor: Harbor) -> None:
    """Off in what the tests start, and the default of .venv-harbor itself (for a hand run
    of .venv-harbor/bin/harbor with no HARBOR_TELEMETRY set)."""
    probe = ("import os; from harbor.telemetry import _telemetry_disabled; "
             "print(os.environ.get('HARBOR_TELEMETRY'), _telemetry_disabled())")
    assert harbor.python_run(probe, cwd=ROOT).stdout.split() == ["0", "True"]
    bare = {k: v for k, v in os.environ.items() if k != "HARBOR_TELEMETRY"}
    done = subprocess.run([str(harbor.python), "-c", probe], env=bare, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.split() == ["0", "True"]


@pytest.mark.docker
@pytest.mark.slow
def test_oracle_passes_and_nop_fails_under_harbor(harbor: Harbor, tmp_path: Path) -> None:
    oracle = _run(harbor, tmp_path, "oracle", "-a", "oracle")
    nop = _run(harbor, tmp_path, "nop", "-a", "nop")
    result = ingest_harbor([oracle, nop])
    assert dict(result.layouts) == {str(Layout.CURRENT): 2} and not result.skipped
    by_agent = {r.scaffold: r for r in result.records}
    passed, failed = by_agent["oracle"], by_agent["nop"]
    assert (passed.task_id, passed.reward, passed.counted, passed.passed) == (
        "word-frequency", 1.0, True, True)
    assert passed.n_tests_failed == 0 and passed.n_tests_passed == 17
    assert (failed.reward, failed.counted, failed.passed) == (0.0, True, False)
    assert failed.n_tests_failed is not None and failed.n_tests_failed > 0


@pytest.mark.docker
@pytest.mark.slow
def test_terminus2_with_the_scripted_stand_in_solves_the_task(harbor: Harbor,
                                                              tmp_path: Path) -> None:
    with ScriptedLLM(WORD_FREQUENCY_REPLIES) as llm:
        job = _run(harbor, tmp_path, "t2", "-a", "terminus-2", "-m", "openai/scripted-stand-in",
                   "--ak", f"api_base={llm.url}", "--ak", "record_terminal_session=false",
                   env={"OPENAI_API_KEY": "sk-scripted-stand-in", "NO_PROXY": "127.0.0.1"})
    assert len(llm.requests) == len(WORD_FREQUENCY_REPLIES)
    [record] = ingest_harbor([job]).records
    assert (record.scaffold, record.model, record.reward, record.passed) == (
        "terminus-2", "scripted-stand-in", 1.0, True)
    assert record.turns == len(WORD_FREQUENCY_REPLIES)
    assert record.episode is not None and record.episode[2].is_valid_tool_call is False
    assert record.messages is not None and record.messages_source == "atif-rebuilt"
