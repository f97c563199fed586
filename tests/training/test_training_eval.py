"""`termgrade train eval`: the commands it prints run as printed. The Harbor command and its
job config are checked by Harbor 0.26 itself (its CLI parses the options, its JobConfig
reads the config: the paper's 2 h as the agent's override_timeout_sec); the follow-up
`termgrade` lines run on a real Harbor job (tests/fixtures/harbor)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.cli import app
from termgrade.training.evaluate import HARBOR_INSTALL, EvalPlan, run_eval
from tests.support.harbor import Harbor

FIXTURE_JOB = (Path(__file__).parents[1] / "fixtures" / "harbor" / "harbor-0.9"
               / "terminus2-scripted")
runner = CliRunner()


def _plan(tmp_path: Path, *extra: str) -> list[str]:
    """The dry run's printed lines (the job config is written under tmp_path/jobs)."""
    result = runner.invoke(app, ["train", "eval", "--model", "openai/adapter", "-o",
                                 str(tmp_path / "jobs"), "--job-name", "terminus2-scripted",
                                 "--dry-run", *extra])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_the_plan_sets_two_hours_per_task_in_harbors_job_config(tmp_path: Path) -> None:
    lines = _plan(tmp_path)
    assert "2 h per task" in lines[0] and "89 tasks" in lines[0]
    config = json.loads((tmp_path / "jobs" / "terminus2-scripted.harbor-job.json").read_text())
    assert config == {"agents": [{"name": "terminus-2", "model_name": "openai/adapter",
                                  "kwargs": {"api_base": "http://127.0.0.1:8000/v1"},
                                  "override_timeout_sec": 7200}]}
    harbor_line = shlex.split(next(line for line in lines if "harbor run" in line))
    assert harbor_line[harbor_line.index("-c") + 1] == str(
        tmp_path / "jobs" / "terminus2-scripted.harbor-job.json")
    assert "-a" not in harbor_line and "-m" not in harbor_line  # they would replace it
    own = _plan(tmp_path / "own", "--task-timeout", "0", "--timeout-multiplier", "2")
    assert "each task's own agent timeout, x2" in own[0]
    assert "--timeout-multiplier" in next(line for line in own if "harbor run" in line)


def test_the_follow_up_commands_run_as_printed(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _plan(tmp_path)
    shutil.copytree(FIXTURE_JOB, tmp_path / "jobs" / "terminus2-scripted")  # what harbor wrote
    monkeypatch.chdir(tmp_path)
    commands = [shlex.split(line) for line in lines if line.strip().startswith("termgrade ")]
    assert [c[1] for c in commands] == ["ingest", "labels", "report"]
    for command in commands:
        result = runner.invoke(app, command[1:])
        assert result.exit_code == 0, (command, result.output)
    assert (tmp_path / "jobs" / "terminus2-scripted-report" / "report.md").is_file()


def test_harbor_missing_names_an_install_a_user_has(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.core.errors import OptionError

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OptionError, match="harbor is not on PATH") as caught:
        run_eval(EvalPlan(model="m", api_base="http://x/v1", jobs_dir=tmp_path, job_name="j"))
    assert caught.value.fix == HARBOR_INSTALL and "scripts/" not in HARBOR_INSTALL


@pytest.mark.slow
def test_harbor_parses_the_command_and_reads_the_job_config(harbor: Harbor,
                                                            tmp_path: Path) -> None:
    lines = _plan(tmp_path)
    words = shlex.split(next(line for line in lines if "harbor run" in line))
    parsed = harbor.run([*words[1:], "--help"], cwd=tmp_path, timeout=120)
    assert parsed.returncode == 0, parsed.stdout + parsed.stderr
    config = tmp_path / "jobs" / "terminus2-scripted.harbor-job.json"
    read = harbor.python_run(
        "import json, sys\n"
        "from harbor.models.job.config import JobConfig\n"
        "job = JobConfig.model_validate(json.load(open(sys.argv[1])))\n"
        "agent = job.agents[0]\n"
        "print(agent.name, agent.model_name, agent.override_timeout_sec, agent.kwargs)\n",
        str(config), cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    assert read.stdout.split()[:3] == ["terminus-2", "openai/adapter", "7200.0"]
