"""``termgrade audit`` through the CLI runner: exit codes, --json, --markdown."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner, Result

from termgrade.cli import audit as audit_cli

FIXTURES = Path(__file__).parents[1] / "fixtures" / "audit"


def make_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    audit_cli.register(app)
    return app


def invoke(*args: str) -> Result:
    return CliRunner().invoke(make_app(), ["audit", *args])


def test_clean_corpus_exits_zero_with_one_json_record_per_task() -> None:
    result = invoke(str(FIXTURES / "corpus"), "--json")
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["task_id"] for r in records] == ["csv-column-sum", "env-file-validate",
                                               "log-level-count"]
    assert all(r["schema_version"] == "1.0" for r in records)
    assert "termgrade audit" in result.stderr


def test_contaminated_corpus_exits_one_and_writes_markdown(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "audit.md"
    result = invoke(str(FIXTURES / "corpus"), str(FIXTURES / "contaminated"),
                    "--against", str(FIXTURES / "tbench"), "--markdown", str(report))
    assert result.exit_code == 1
    assert result.stdout == ""  # no --json: machine output stays off stdout
    text = report.read_text()
    assert "| ledger-balances | instruction | ledger-balance |" in text
    assert "contamination flags (8-gram containment >= 0.5, against 1 external tasks): 2" in text
    assert not list(report.parent.glob(".*.tmp"))


def test_thresholds_are_passed_through() -> None:
    result = invoke(str(FIXTURES / "contaminated"), "--against", str(FIXTURES / "tbench"),
                    "--contamination-threshold", "1.0", "--json")
    matches = json.loads(result.stdout)["contamination"]
    assert {m["field"]: m["flagged"] for m in matches} == {"instruction": True, "tests": False}
    assert invoke(str(FIXTURES / "corpus"), "--min-tests", "13").exit_code == 1


def test_missing_path_names_it_and_exits_one(tmp_path: Path) -> None:
    result = invoke(str(tmp_path / "nowhere"))
    assert result.exit_code == 1
    assert "nowhere" in result.stderr and "no such directory" in result.stderr
