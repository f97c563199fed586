"""Damaged Harbor output: unfinished, malformed or repeated trial folders, bad paths.

Each test copies a real fixture job (tests/fixtures/harbor) and damages the copy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from termgrade.cli import ingest as ingest_cli
from termgrade.core.errors import DataWarning
from termgrade.ingest import ingest_harbor, write_jsonl
from termgrade.ingest.errors import IngestError
from termgrade.records import TrialRecord

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harbor"
CURRENT = FIXTURES / "harbor-0.9"


def _invoke(*args: str) -> Result:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    ingest_cli.register(app)
    return CliRunner().invoke(app, ["ingest", "harbor", *args])


def _copy_job(tmp_path: Path, job: str, layout: Path = CURRENT) -> Path:
    target = tmp_path / job
    shutil.copytree(layout / job, target)
    return target


def _trials(job: Path) -> list[Path]:
    return sorted(p for p in job.iterdir() if p.is_dir() and "__" in p.name)


def test_a_trial_without_result_json_is_skipped_with_a_warning(tmp_path: Path) -> None:
    job = _copy_job(tmp_path, "oracle")
    unfinished = _trials(job)[0]
    (unfinished / "result.json").unlink()
    with pytest.warns(DataWarning, match=r"skipped 1 Harbor trial folder\(s\) \(1 incomplete\)"):
        result = ingest_harbor([job])
    assert len(result.records) == len(_trials(job)) - 1
    assert [(s.path, s.kind) for s in result.skipped] == [(unfinished, "incomplete")]
    assert result.skipped_count("incomplete") == 1 and result.skipped_count("malformed") == 0
    assert unfinished.name not in {r.trial_id for r in result.records}


def test_unparsable_and_invalid_results_are_skipped_as_malformed(tmp_path: Path) -> None:
    job = _copy_job(tmp_path, "oracle")
    broken, invalid, unfinished = _trials(job)[:3]
    (broken / "result.json").write_text('{"trial_name": "x", ')
    data = json.loads((invalid / "result.json").read_text())
    del data["agent_info"]
    (invalid / "result.json").write_text(json.dumps(data))
    data = json.loads((unfinished / "result.json").read_text())
    data["finished_at"] = None
    (unfinished / "result.json").write_text(json.dumps(data))
    with pytest.warns(DataWarning, match=r"2 malformed"):
        result = ingest_harbor([job])
    kinds = {s.path: s.kind for s in result.skipped}
    assert kinds == {broken: "malformed", invalid: "malformed", unfinished: "incomplete"}
    reasons = {s.path: s.reason for s in result.skipped}
    assert "agent_info" in reasons[invalid]
    assert len(result.records) == len(_trials(job)) - 3
    # attempts are renumbered over what remains
    assert sorted(r.attempt for r in result.records if r.task_id == "word-frequency") in (
        [0], [0, 1])


def test_a_broken_trajectory_keeps_the_trial_without_messages(tmp_path: Path) -> None:
    job = _copy_job(tmp_path, "terminus2-scripted")
    trial = _trials(job)[0]
    (trial / "agent" / "trajectory.json").write_text("{ not json")
    result = ingest_harbor([job])
    record = next(r for r in result.records if r.trial_id == trial.name)
    assert record.reward == 1.0 and record.counted
    assert record.messages is None and record.episode is None
    assert len(result.notes) == 1 and "trajectory unreadable" in result.notes[0]


def test_a_job_given_twice_is_read_once(tmp_path: Path) -> None:
    job = _copy_job(tmp_path, "oracle")
    result = ingest_harbor([job, job, _trials(job)[0]])
    assert len(result.records) == len(_trials(job))
    assert result.duplicates == len(_trials(job)) + 1


def test_a_trial_name_reused_by_another_job_gets_a_qualified_id(tmp_path: Path) -> None:
    first = _copy_job(tmp_path, "nop")
    second = tmp_path / "nop-again"
    shutil.copytree(first, second)
    for trial in _trials(second):
        data = json.loads((trial / "result.json").read_text())
        data["id"] = "00000000-0000-0000-0000-" + data["id"][-12:]
        (trial / "result.json").write_text(json.dumps(data))
    result = ingest_harbor([first, second])
    ids = [r.trial_id for r in result.records]
    assert len(ids) == 2 * len(_trials(first)) == len(set(ids))
    assert any(i.startswith("nop-again/") for i in ids)
    assert sorted(r.attempt for r in result.records) == list(range(len(ids)))


def test_paths_without_trials_are_errors(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file"):
        ingest_harbor([tmp_path / "missing"])
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    with pytest.raises(IngestError, match="no Harbor trial folders") as info:
        ingest_harbor([tmp_path / "empty"])
    assert "harbor run" in str(info.value)


def test_a_folder_of_jobs_and_a_single_trial_folder_are_accepted(tmp_path: Path) -> None:
    root = tmp_path / "jobs"
    _copy_job(root, "oracle")
    _copy_job(root, "nop")
    everything = ingest_harbor([root])
    assert len(everything.records) == len(_trials(root / "oracle")) + len(_trials(root / "nop"))
    single = ingest_harbor([_trials(root / "nop")[0]])
    assert [r.scaffold for r in single.records] == ["nop"]


def test_write_jsonl_replaces_the_file_atomically(tmp_path: Path) -> None:
    records = ingest_harbor([CURRENT / "oracle"]).records
    out = tmp_path / "trials.jsonl"
    out.write_text("old content\n")
    write_jsonl(out, records)
    lines = out.read_text().splitlines()
    assert [TrialRecord.model_validate_json(line) for line in lines] == records
    assert [p.name for p in tmp_path.iterdir()] == ["trials.jsonl"]


def test_cli_writes_trials_and_a_json_summary(tmp_path: Path) -> None:
    out = tmp_path / "out" / "trials.jsonl"
    result = _invoke(str(CURRENT / "oracle"), str(CURRENT / "errors"), "-o", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    rows = [TrialRecord.model_validate_json(line) for line in out.read_text().splitlines()]
    assert summary["trials"] == len(rows) == len(_trials(CURRENT / "oracle")) + 2
    assert summary["counted"] == sum(r.counted for r in rows) == len(rows) - 1
    assert summary["layouts"] == {"harbor-0.9": len(rows)}
    assert {g["task_id"] for g in summary["groups"]} >= {"wf-broken-build", "word-frequency"}


def test_cli_refuses_when_no_trial_finished(tmp_path: Path) -> None:
    job = _copy_job(tmp_path, "nop")
    for trial in _trials(job):
        (trial / "result.json").unlink()
    out = tmp_path / "trials.jsonl"
    result = _invoke(str(job), "-o", str(out))
    assert result.exit_code == 1
    assert "no finished trial" in result.stderr and "skipped" in result.stderr
    assert not out.exists()


def test_cli_without_transcripts_keeps_counts_but_no_messages(tmp_path: Path) -> None:
    out = tmp_path / "trials.jsonl"
    result = _invoke(str(CURRENT / "terminus2-scripted"), "-o", str(out), "--no-transcripts")
    assert result.exit_code == 0, result.stderr
    rows = [TrialRecord.model_validate_json(line) for line in out.read_text().splitlines()]
    assert rows and all(r.messages is None and r.episode is None and r.per_turn == []
                        for r in rows)
    assert all(r.turns == 5 and r.input_tokens for r in rows)  # from result.json alone
    assert "wrote" in result.stderr and "terminus-2" in result.stderr
