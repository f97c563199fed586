"""The generated environments/README.md: content, --check, and the live corpus's file."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer
from typer.testing import CliRunner

from termgrade.audit.corpus_readme import (
    corpus_rows,
    generate_readme,
    readme_is_stale,
    readme_path,
    write_readme,
)
from termgrade.cli import corpus as corpus_cli

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENTS = REPO / "environments"
CORPUS = Path(__file__).parents[1] / "fixtures" / "audit" / "corpus"


def make_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    corpus_cli.register(app)
    return app


def test_rows_count_functions_and_parametrize_cases() -> None:
    rows = {row.task_id: row for row in corpus_rows(CORPUS)}
    assert (rows["csv-column-sum"].functions, rows["csv-column-sum"].assertions) == (12, 12)
    # log-level-count parametrizes one test over two levels: 12 functions, 13 assertions
    assert (rows["log-level-count"].functions, rows["log-level-count"].assertions) == (12, 13)
    assert rows["env-file-validate"].difficulty == "hard"
    assert rows["log-level-count"].domain == "log-analysis"


def test_readme_table_and_totals() -> None:
    text = generate_readme(CORPUS)
    assert "3 tasks, 38 assertions (12.7 per task)." in text
    assert "| [log-level-count](log-level-count/) | log-analysis | medium | 12 | 13 |" in text
    assert "| **total** | **3** | **1** | **1** | **1** | **38** |" in text
    assert "| hard | 1 | 13 | 13.0 |" in text
    assert text == generate_readme(CORPUS)  # deterministic


def test_check_flags_a_stale_readme_until_regenerated(tmp_path: Path) -> None:
    corpus = tmp_path / "environments"
    shutil.copytree(CORPUS, corpus)
    runner = CliRunner()
    check = ["corpus", "readme", "--dir", str(corpus), "--check"]
    assert runner.invoke(make_app(), check).exit_code == 1  # missing
    assert runner.invoke(make_app(), ["corpus", "readme", "--dir", str(corpus)]).exit_code == 0
    assert runner.invoke(make_app(), check).exit_code == 0
    shutil.rmtree(corpus / "env-file-validate")
    assert readme_is_stale(corpus)
    result = runner.invoke(make_app(), check)
    assert result.exit_code == 1 and "stale" in result.stderr
    assert write_readme(corpus) == readme_path(corpus)
    assert "2 tasks" in readme_path(corpus).read_text()


def test_environments_readme_is_up_to_date() -> None:
    """Regenerate with `termgrade corpus readme` after adding or changing a task."""
    path = readme_path(ENVIRONMENTS)
    assert path.is_file(), "environments/README.md is missing: run `termgrade corpus readme`"
    assert path.read_text(encoding="utf-8") == generate_readme(ENVIRONMENTS), (
        "environments/README.md is stale: run `termgrade corpus readme`")
