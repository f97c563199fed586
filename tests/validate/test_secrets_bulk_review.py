"""Issue 44, item 7: a third-party corpus's secret findings (TermiGen: 3,036) were one
prompt each; `secrets review --accept-all / --accept GLOB [--detector TYPE] --reason TEXT`
decides many at once and records why in the baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.builders.layout import RepoPaths
from termgrade.cli import app
from tests.support.task_dirs import MakeTask
from tests.validate.test_cell_secrets import LEAKY_OUTPUT, _repo, said

runner = CliRunner()
REASON = "fixture keys of the corpus's security tasks, not credentials"


@pytest.fixture
def leaky(tmp_path: Path, make_task: MakeTask) -> Path:
    return _repo(tmp_path, make_task, LEAKY_OUTPUT)


def _entries(repo: Path) -> list[dict[str, object]]:
    data = json.loads(RepoPaths(repo).secrets_baseline.read_text())
    return [e for items in data["results"].values() for e in items]


def test_a_glob_and_a_detector_decide_those_findings_at_once_with_the_reason(
        leaky: Path) -> None:
    picked = runner.invoke(app, ["secrets", "review", str(leaky), "--accept", "data/sft/*",
                                 "--detector", "github token", "--reason", REASON])
    assert picked.exit_code == 0, said(picked)
    assert "1 undecided finding(s) picked marked not secret" in said(picked)
    entries = _entries(leaky)
    decided = [e for e in entries if "is_secret" in e]
    assert [(e["type"], str(e["filename"]).split("/")[1], e["is_secret"], e["reason"])
            for e in decided] == [("GitHub Token", "sft", False, REASON)]
    # The rest is still undecided: validate still fails, on them only.
    still = runner.invoke(app, ["validate", str(leaky), "--no-load"])
    assert still.exit_code == 1 and "Private Key" in said(still)


def test_accept_all_passes_validate_and_the_reason_survives_a_rewritten_baseline(
        leaky: Path) -> None:
    assert runner.invoke(app, ["validate", str(leaky), "--no-load"]).exit_code == 1
    done = runner.invoke(app, ["secrets", "review", str(leaky), "--accept-all",
                               "--reason", REASON])
    assert done.exit_code == 0, said(done)
    assert "0 undecided" in said(done)
    assert runner.invoke(app, ["validate", str(leaky), "--no-load"]).exit_code == 0
    # Rewritten from a new scan (that run shows every finding, by design): the decisions
    # and their reason are kept, and validate passes again.
    runner.invoke(app, ["validate", str(leaky), "--no-load", "--write-secrets-baseline"])
    assert runner.invoke(app, ["validate", str(leaky), "--no-load"]).exit_code == 0
    entries = _entries(leaky)
    assert entries and all(e["is_secret"] is False and e["reason"] == REASON
                           for e in entries), entries


@pytest.mark.parametrize(("args", "says"), [
    (["--accept-all"], "add --reason TEXT"),
    (["--accept-all", "--reason", " "], "--reason is empty"),
    (["--accept-all", "--accept", "x", "--reason", "r"], "give one of them"),
    (["--detector", "GitHub Token"], "narrows --accept or --accept-all"),
    (["--accept-all", "--detector", "Github Tokn", "--reason", "r"],
     "no detect-secrets detector reports that type"),
])
def test_a_bulk_decision_without_its_reason_or_with_a_wrong_detector_is_refused(
        leaky: Path, args: list[str], says: str) -> None:
    result = runner.invoke(app, ["secrets", "review", str(leaky), *args], input="q\n")
    assert result.exit_code != 0, said(result)
    assert says in said(result) or says in " ".join(str(result.exception or "").split()), \
        said(result)
    baseline = RepoPaths(leaky).secrets_baseline
    assert not baseline.exists() or all("is_secret" not in e for e in _entries(leaky))
