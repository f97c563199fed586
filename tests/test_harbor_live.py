"""Really running Harbor on our word-frequency task, then ingesting what it wrote.

Harbor comes from scripts/ensure_harbor.sh (a Python 3.12 venv at .venv-harbor, and
docker compose v2). The task image starts FROM termgrade/base:local, which Harbor builds
against with ``pull_policy: build``, so nothing is pulled.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from termgrade.ingest import Layout, ingest_harbor
from termgrade.testing.scripted_llm import WORD_FREQUENCY_REPLIES, ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
TASK = "environments/word-frequency"

pytestmark = [pytest.mark.harbor, pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def harbor() -> str:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "ensure_harbor.sh")],
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def _run(harbor: str, jobs: Path, job: str, *args: str, env: dict[str, str] | None = None) -> Path:
    command = [harbor, "run", "-y", "-n", "1", "-p", TASK, "-o", str(jobs), "--job-name", job,
               *args]
    environment = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env=environment, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return jobs / job


def test_oracle_passes_and_nop_fails_under_harbor(harbor: str, tmp_path: Path) -> None:
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


def test_terminus2_with_the_scripted_stand_in_solves_the_task(harbor: str,
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
