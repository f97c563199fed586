"""Both scaffolds feed the same labels: a model graded with Harbor's Terminus-2
(``harbor run``, then ``termgrade ingest harbor``) and with TermGrade's bash tool-calling
scaffold (``termgrade grade``), on the same task, labelled together.

Both "models" are scripted stand-ins behind loopback endpoints under one model name: the
Terminus-2 script of tests/support/scripted_llm.py and the replayed reference solution of
tests/support/scripted_tools.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.grade import TRIALS_FILE, grade_model
from termgrade.ingest import ingest_harbor
from termgrade.labels.compute import compute_labels
from termgrade.trialsets.io import read_trials, write_trials
from tests.support.harbor import Harbor
from tests.support.scripted_llm import STAND_IN_MODEL, WORD_FREQUENCY_REPLIES, ScriptedLLM
from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"

pytestmark = [pytest.mark.harbor, pytest.mark.docker, pytest.mark.slow]


def test_terminus2_under_harbor_and_bash_tool_under_termgrade_label_together(
        harbor: Harbor, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    with ScriptedLLM(WORD_FREQUENCY_REPLIES) as llm:
        done = harbor.run(
            ["run", "-y", "-n", "1", "-p", "environments/word-frequency", "-o", str(jobs),
             "--job-name", "t2", "-a", "terminus-2", "-m", f"openai/{STAND_IN_MODEL}",
             "--ak", f"api_base={llm.url}", "--ak", "record_terminal_session=false"],
            cwd=ROOT, timeout=900,
            env={"OPENAI_API_KEY": "sk-scripted-stand-in", "NO_PROXY": "127.0.0.1",
                 "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    harbor_trials = tmp_path / "harbor-trials.jsonl"
    write_trials(harbor_trials, ingest_harbor([jobs / "t2"]).records)

    with ScriptedToolEndpoint(replay_solution((TASK / "solution" / "solve.sh").read_text()),
                              model=STAND_IN_MODEL) as tools:
        agent = ModelAgent(Endpoint(tools.url, STAND_IN_MODEL, api_key_env=None),
                           ScaffoldConfig())
        grade_model([TASK], agent, tmp_path / "graded", k=2, workers=2, progress=False)

    labels = compute_labels(read_trials([harbor_trials, tmp_path / "graded" / TRIALS_FILE]))
    rows = {(r.model, r.scaffold): r for r in labels.rows()}
    assert set(rows) == {(STAND_IN_MODEL, "terminus-2"), (STAND_IN_MODEL, "bash-tool")}
    assert {r.task_id for r in rows.values()} == {"word-frequency"}
    assert rows[(STAND_IN_MODEL, "terminus-2")].n_counted == 1
    assert rows[(STAND_IN_MODEL, "bash-tool")].n_counted == 2
    assert all(r.pass_rate == 1.0 for r in rows.values())
