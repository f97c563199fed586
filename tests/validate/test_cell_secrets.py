"""Secrets in parquet cells: a trajectories repo whose tool output holds a private-key
header, a GitHub token and an AWS secret fails `termgrade validate` and `publish`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from detect_secrets.core.scan import scan_file
from detect_secrets.settings import default_settings
from typer.testing import CliRunner

from termgrade.builders.layout import RepoPaths
from termgrade.builders.trajectories import build_trajectories
from termgrade.cli import app
from termgrade.records import ChatMessage, EpisodeStep, TrialRecord
from termgrade.validate import validate_repo
from termgrade.validate.cell_secrets import CELL_NAME, scan_parquet, scan_texts
from tests.support.task_dirs import MakeTask

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3x9Lk2Pa"
LEAKY_OUTPUT = ("$ cat ~/.ssh/id_rsa ~/.env\n"
                "-----BEGIN RSA PRIVATE KEY-----\n"
                "MIIEpAIBAAKCAQEA\n"
                "-----END RSA PRIVATE KEY-----\n"
                f"GITHUB_TOKEN={GITHUB}\n"
                f"aws_secret_access_key = \"{AWS_SECRET}\"\n")
runner = CliRunner()


def said(result: object) -> str:
    """The command's output with the console's line wrapping undone."""
    return " ".join(str(getattr(result, "output", "")).split())


def _trial(i: int, output: str) -> TrialRecord:
    return TrialRecord(
        trial_id=f"alpha__{i}", task_id="alpha", model="org/model-a", scaffold="terminus-2",
        attempt=i, reward=0.0, passed=False, counted=True, source="jobs/run-1",
        messages=[ChatMessage(role="user", content="Show me the config."),
                  ChatMessage(role="assistant", content="Running cat."),
                  ChatMessage(role="user", content=output)],
        episode=[EpisodeStep(index=0, source="agent", message="cat",
                             keystrokes=["cat ~/.ssh/id_rsa ~/.env\n"], observation=output)])


def _repo(tmp_path: Path, make_task: MakeTask, output: str) -> Path:
    make_task("alpha")
    trials = tmp_path / "t.jsonl"
    trials.write_text("".join(_trial(i, output if i == 1 else "ok\n").model_dump_json() + "\n"
                              for i in range(3)))
    out = tmp_path / "dist" / "traj"
    build_trajectories(out, trials=trials, task_roots=[tmp_path / "tasks"], repo_id="org/traj")
    return out


@pytest.fixture
def leaky(tmp_path: Path, make_task: MakeTask) -> Path:
    return _repo(tmp_path, make_task, LEAKY_OUTPUT)


def test_cells_are_scanned_as_detect_secrets_scans_the_same_text_as_a_file(
        tmp_path: Path) -> None:
    texts = [LEAKY_OUTPUT, "nothing here\n", "password = hunter2hunter2hunter2hunter2\n",
             "[db]\npassword = 'Zx8Qw2Lp0Rt6Yu4Io1Pa3Sd5Fg7Hj9Kl'\n", "a\r\nb: c\r\n",
             f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nHOME=/root\n",  # read as INI: quoted
             f'{{"keystrokes": "export TOKEN={AWS_SECRET}\\n", "duration": 1}}',
             f"secret_key =\n    {AWS_SECRET}\n", "2026-01-12T14:03:22Z", "ok\rdone\n"]
    found = {}
    with default_settings():
        found = scan_texts(texts)
        for text in texts:
            path = tmp_path / CELL_NAME
            path.write_text(text, newline="")
            expected = sorted((s.line_number, s.type, s.secret_hash) for s in scan_file(str(path)))
            assert sorted(f[:3] for f in found.get(text, [])) == expected, text
    assert {kind for _, kind, _ in found[LEAKY_OUTPUT]} >= {
        "Private Key", "GitHub Token", "AWS Access Key"}


def test_validate_fails_naming_file_row_column_and_type_never_the_secret(
        leaky: Path) -> None:
    result = runner.invoke(app, ["validate", str(leaky), "--no-load"])
    assert result.exit_code == 1
    out = said(result)
    assert "data/sft/train-00000-of-00001.parquet row 1 [messages.content line 5]" in out
    assert "GitHub Token" in out and "Private Key" in out
    assert GITHUB not in out and AWS_SECRET not in out
    cache = leaky.parent / "traj.validate-cache.json"
    assert GITHUB not in cache.read_text()
    again = validate_repo(leaky, load=False)  # from the cache: still found
    assert any("GitHub Token" in str(f) for f in again.findings)


def test_a_clean_trajectories_repo_passes_and_says_how_many_cells(
        tmp_path: Path, make_task: MakeTask) -> None:
    report = validate_repo(_repo(tmp_path, make_task, "total 0\n"), load=False)
    assert report.ok, report.findings
    assert "cell" in report.passed["secrets"]


def test_publish_refuses_the_leaky_repo_even_as_a_dry_run(leaky: Path) -> None:
    result = runner.invoke(app, ["publish", str(leaky), "--repo-id", "org/traj", "--dry-run"])
    assert result.exit_code != 0
    assert "GitHub Token" in said(result)
    assert GITHUB not in said(result)


def test_reviewed_cell_findings_pass_and_one_marked_secret_fails_again(leaky: Path) -> None:
    written = runner.invoke(app, ["validate", str(leaky), "--no-load",
                                  "--write-secrets-baseline"])
    # Written, shown, and not accepted in the same run: the user has not reviewed it yet.
    assert written.exit_code == 1
    assert "GitHub Token" in said(written) and "review them" in said(written)
    baseline = RepoPaths(leaky).secrets_baseline
    data = json.loads(baseline.read_text())
    assert any(name.startswith("data/sft/") for name in data["results"])
    assert GITHUB not in baseline.read_text()
    # Listed, never reviewed: still a failure.
    assert runner.invoke(app, ["validate", str(leaky), "--no-load"]).exit_code == 1
    # A person reviews it: the cell is shown (the row's text around the token) and
    # marked not secret.
    reviewed = runner.invoke(app, ["secrets", "review", str(leaky)], input="n\n" * 30)
    assert reviewed.exit_code == 0, said(reviewed)
    assert "row 1 [messages.content]" in said(reviewed) and GITHUB in said(reviewed)
    assert "0 undecided" in said(reviewed)
    assert runner.invoke(app, ["validate", str(leaky), "--no-load"]).exit_code == 0
    data = json.loads(baseline.read_text())
    for items in data["results"].values():
        for item in items:
            item["is_secret"] = True
    baseline.write_text(json.dumps(data))
    assert runner.invoke(app, ["validate", str(leaky), "--no-load"]).exit_code == 1


def test_scan_parquet_names_every_cell(leaky: Path) -> None:
    with default_settings():
        hits = scan_parquet(next((leaky / "data" / "sft").glob("*.parquet")))
    assert {(h.row, h.column) for h in hits} == {(1, "messages.content")}
