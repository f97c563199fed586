"""`termgrade synth --transcripts` writes what `termgrade build trajectories` takes: the
commands as a user types them, in a folder with no task dirs."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from termgrade.cli import app
from termgrade.core.errors import DataWarning

runner = CliRunner()


def test_synth_transcripts_build_and_validate(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no environments/ here: no task dirs at all
    made = runner.invoke(app, ["synth", "-o", "t.jsonl", "--tasks", "3", "--model", "m:2",
                               "--transcripts"])
    assert made.exit_code == 0, made.output
    with pytest.warns(DataWarning, match=r"3 task\(s\) have no task dir \(no --tasks given\)"):
        built = runner.invoke(app, ["build", "trajectories", "--trials", "t.jsonl",
                                    "-o", "out"])
    assert built.exit_code == 0, built.output
    sft = pq.read_table(next((tmp_path / "out" / "data" / "sft").glob("*.parquet")))
    episodes = pq.read_table(next((tmp_path / "out" / "data" / "episodes").glob("*.parquet")))
    assert sft.num_rows == episodes.num_rows == 8  # retried infrastructure errors included
    assert all(i.startswith("[synthetic transcript") or "synthetic" in i
               for i in episodes.column("instruction").to_pylist())
    checked = runner.invoke(app, ["validate", "out", "--no-load"])
    assert checked.exit_code == 0, checked.output


def test_a_task_no_transcript_names_is_still_refused(tmp_path: Path) -> None:
    from termgrade.records import TrialRecord

    record = TrialRecord(trial_id="x__0", task_id="x", model="m", scaffold="s", attempt=0,
                         reward=None, passed=False, counted=False, source="test")
    trials = tmp_path / "t.jsonl"
    trials.write_text(record.model_dump_json() + "\n")
    built = runner.invoke(app, ["build", "trajectories", "--trials", str(trials),
                                "-o", str(tmp_path / "out"), "-t", str(tmp_path)])
    assert built.exit_code == 1
    assert "trial of unknown task 'x'" in " ".join(built.output.split())
    assert not (tmp_path / "out").exists()
