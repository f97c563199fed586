"""``termgrade audit`` through the CLI runner: exit codes, --json, --markdown."""

from __future__ import annotations

import json
import shutil
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


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(make_app(), ["audit", *args], env=env)


def test_clean_corpus_exits_zero_with_one_json_record_per_task() -> None:
    result = invoke(str(FIXTURES / "corpus"), "--json")
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["task_id"] for r in records] == ["csv-column-sum", "env-file-validate",
                                               "log-level-count"]
    assert all(r["schema_version"] == "1.0" for r in records)
    assert "tasks audited: 3; passing: 3" in result.stderr  # --json holds stdout


def test_contaminated_corpus_exits_one_and_writes_markdown(tmp_path: Path) -> None:
    report = tmp_path / "reports" / "audit.md"
    result = invoke(str(FIXTURES / "corpus"), str(FIXTURES / "contaminated"),
                    "--against", str(FIXTURES / "tbench"), "--markdown", str(report))
    assert result.exit_code == 1
    # No --json: the audit is the command's result, on stdout; stderr holds only the log.
    assert "termgrade audit" in result.stdout and "contamination flags" in result.stdout
    log = result.stderr.replace("\n", "")
    assert "termgrade audit" not in log and f"wrote {report}" in log
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


def test_a_large_corpus_is_summarised_per_check_and_listed_in_full_with_all(
        tmp_path: Path) -> None:
    """Thousands of flagged tasks on an 80-column terminal stay a screenful: the findings
    per check, the first tasks one line each; --all lists every task with its reasons."""
    corpus = tmp_path / "corpus"
    source = FIXTURES / "corpus" / "csv-column-sum"
    for i in range(80):
        task = corpus / f"a-rather-long-task-name-for-column-folding-{i:03d}"
        shutil.copytree(source, task)
        (task / "instruction.md").write_text(f"Task {i}: " + " ".join(
            f"word{i}x{j}" for j in range(60)) + "\n")
    result = invoke(str(corpus), "--min-tests", "40", env={"COLUMNS": "80"})
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) < 60, f"{len(lines)} lines:\n" + result.stdout
    said = " ".join(result.stdout.split())
    assert "findings per check" in said and "enough_tests │ 80 │" in said, said
    assert "60 more flagged task(s) not shown: --all lists every task" in said
    everything = invoke(str(corpus), "--min-tests", "40", "--all", env={"COLUMNS": "400"})
    assert everything.exit_code == 1
    assert all(f"column-folding-{i:03d}" in everything.stdout for i in range(80))
    assert everything.stdout.count("enough_tests: ") == 80
    assert "not shown" not in everything.stdout
