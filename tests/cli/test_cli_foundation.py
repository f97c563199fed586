"""The CLI: every command has help; verify/run/doctor work end to end once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.core import TyperCommand, TyperGroup
from typer.testing import CliRunner

from termgrade.cli.app import COMMANDS, app, load_group
from termgrade.verify import Journal, verify_tasks
from tests.support.task_dirs import MakeTask

runner = CliRunner()


def _all_command_paths() -> list[tuple[str, ...]]:
    """Every command and subcommand, from the lazy table and each module's own group."""
    paths: list[tuple[str, ...]] = []

    def walk(command: TyperCommand | TyperGroup, path: tuple[str, ...]) -> None:
        paths.append(path)
        if isinstance(command, TyperGroup):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))

    for name, (module, _) in COMMANDS.items():
        walk(load_group(module).commands[name], (name,))
    return paths


def test_every_command_has_help() -> None:
    paths = _all_command_paths()
    assert ("verify",) in paths and ("run",) in paths and ("base-image", "build") in paths
    for path in paths:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage" in result.output


def test_known_error_is_one_message_and_exit_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "not a directory" in result.output
    assert "Traceback" not in result.output


@pytest.mark.docker
def test_verify_cli_json_output_and_exit_status(make_task: MakeTask, tmp_path: Path) -> None:
    good = make_task("good")
    make_task("bad", solve="echo nope > /app/out.txt\n")
    out = tmp_path / "records.jsonl"
    result = runner.invoke(app, ["verify", str(good.parent), "--json", "-n", "1", "-o", str(out),
                                 "--journal", str(tmp_path / "j.jsonl")])
    assert result.exit_code == 1, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert {r["task_id"]: r["verdict"] for r in lines} == {"bad": "unsatisfiable",
                                                            "good": "verified"}
    required = {"task_id", "verdict", "oracle_rewards", "nop_reward", "n_assertions", "tests",
                "tampered", "durations", "error"}
    assert all(required <= set(r) for r in lines)
    assert len(out.read_text().splitlines()) == 2
    assert "funnel" in result.output and "unsatisfiable 1" in result.output


@pytest.mark.docker
def test_resume_skips_finished_and_reruns_changed(make_task: MakeTask, tmp_path: Path) -> None:
    first = make_task("first")
    second = make_task("second")
    journal = Journal(tmp_path / "journal.jsonl")
    report = verify_tasks([first.parent], repeat=1, journal=journal, progress=False)
    assert report.all_verified and report.resumed == 0
    # A third task appears, the second one changes: only those two run again.
    make_task("third")
    (second / "instruction.md").write_text("Write hello to /app/out.txt, please.\n")
    report = verify_tasks([first.parent], repeat=1, journal=journal, resume=True, progress=False)
    assert report.resumed == 1
    assert [r.task_id for r in report.records] == ["first", "second", "third"]
    assert report.all_verified
    assert len(journal.path.read_text().splitlines()) == 4


@pytest.mark.docker
def test_run_cli_oracle_and_nop(make_task: MakeTask) -> None:
    root = make_task("quick")
    ok = runner.invoke(app, ["run", str(root), "--agent", "oracle"])
    assert ok.exit_code == 0, ok.output
    assert "reward: 1" in ok.stdout and "test_output_content" in ok.output
    nop = runner.invoke(app, ["run", str(root), "--agent", "nop"])
    assert nop.exit_code == 1 and "reward: 0" in nop.stdout


@pytest.mark.docker
def test_doctor_reports_ok() -> None:
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "docker engine" in result.output and "base image" in result.output
