"""`termgrade labels` and `termgrade synth` through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.support.labels import cli_app, trial, write_jsonl
from tests.support.task_dirs import MakeTask

runner = CliRunner()


def test_synth_then_labels(tmp_path: Path) -> None:
    trials, truth, labels = tmp_path / "t.jsonl", tmp_path / "truth.jsonl", tmp_path / "l.jsonl"
    done = runner.invoke(cli_app(), ["synth", "-o", str(trials), "--tasks", "12", "--seed", "4",
                                     "--model", "synthetic-x:4:0.5", "--model",
                                     "synthetic-y:2", "--truth", str(truth)])
    assert done.exit_code == 0, done.output
    assert len(truth.read_text().splitlines()) == 24
    done = runner.invoke(cli_app(), ["labels", str(trials), "-o", str(labels), "--cuts",
                                     "0.2,0.8", "--band-names", "z,lo,mid,hi,o"])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    assert len(rows) == 24
    assert {r["band"] for r in rows} <= {"z", "lo", "mid", "hi", "o"}
    assert {r["k"] for r in rows if r["model"] == "synthetic-y"} == {2}


def test_labels_prints_warnings_and_errors(tmp_path: Path) -> None:
    rows = [trial(t, "m1", attempt=i) for t in ("a", "b") for i in range(2)] + [trial("a", "m2")]
    rows[0]["reward"] = float("nan")
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(tmp_path / "l.jsonl")])
    assert done.exit_code == 0, done.output
    assert "nan_reward" in done.output and "missing_tasks" in done.output
    assert "mixed_k" in done.output
    bad = write_jsonl(tmp_path / "bad.jsonl", [trial("a")], raw_lines=["{oops"])
    done = runner.invoke(cli_app(), ["labels", str(bad), "-o", str(tmp_path / "x.jsonl")])
    assert done.exit_code == 1
    assert "bad.jsonl:2" in done.output and "not valid JSON" in done.output
    assert not (tmp_path / "x.jsonl").exists()
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(tmp_path / "x.jsonl"),
                                     "--cuts", "0.9,0.1"])
    assert done.exit_code == 1 and "increasing" in done.output


def test_the_installed_entry_point_registers_the_commands() -> None:
    done = subprocess.run([sys.executable, "-c", "from termgrade.cli import main; main()",
                           "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    for command in ("labels", "synth", "report", "select"):
        assert command in done.stdout


@pytest.mark.slow
def test_synth_transcripts_build_a_valid_trajectories_repo(
        tmp_path: Path, make_task: MakeTask) -> None:
    from termgrade.builders.trajectories import build_trajectories
    from termgrade.records import TrialRecord
    from termgrade.trialsets.synthetic_transcript import SYNTHETIC_MARK
    from termgrade.validate import validate_repo

    args = ["synth", "--tasks", "3", "--seed", "2", "--model", "synthetic-x:3:0.5",
            "--infra-rate", "0.3"]
    plain, first, again = tmp_path / "p.jsonl", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, extra in ((plain, []), (first, ["--transcripts"]), (again, ["--transcripts"])):
        done = runner.invoke(cli_app(), [*args, "-o", str(path), *extra])
        assert done.exit_code == 0, done.output
    assert first.read_bytes() == again.read_bytes()  # same seed, same bytes
    records = [TrialRecord.model_validate_json(line) for line in first.read_text().splitlines()]
    bare = [TrialRecord.model_validate_json(line) for line in plain.read_text().splitlines()]
    assert [r.trial_id for r in records] == [r.trial_id for r in bare]
    assert all(r.episode is None for r in bare)
    graded = [r for r in records if r.counted]
    assert graded and any(not r.counted for r in records)  # infra errors: no transcript
    assert all(r.episode is None and not r.per_turn for r in records if not r.counted)
    for record in graded:
        steps = record.episode or []
        assert len(steps) == (record.turns or 0) + 1 and len(record.per_turn) == record.turns
        assert steps[0].message.startswith(SYNTHETIC_MARK)
        assert all(s.observation and s.keystrokes for s in steps[1:])
        assert sum(t.output_tokens or 0 for t in record.per_turn) == record.output_tokens
    for task_id in sorted({r.task_id for r in records}):
        make_task(task_id)
    out = tmp_path / "traj"
    summary = build_trajectories(out, trials=first, task_roots=[tmp_path / "tasks"])
    assert summary.stats.trials == len(records)
    assert validate_repo(out, secrets=False).ok
    sft = pq.read_table(out / "data" / "sft").to_pylist()
    rebuilt = [r for r in sft if r["messages_source"] == "episode-rebuilt"]
    assert len(rebuilt) == len(graded)
    assert all(r["messages"][0]["content"].startswith(SYNTHETIC_MARK) for r in rebuilt)


def test_labels_refuses_a_task_with_no_counted_trial_unless_kept(tmp_path: Path) -> None:
    rows = [trial("ok", "m", attempt=i, passed=i == 0) for i in range(2)]
    rows += [trial("dead", "m", attempt=0, retry=r, counted=False) for r in range(4)]
    path = write_jsonl(tmp_path / "trials.jsonl", rows)
    out = tmp_path / "labels.jsonl"
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(out)])
    assert done.exit_code == 1, done.output
    assert "no counted trial" in done.output and "dead x m (terminus-2)" in done.output
    assert "--keep-uncounted" in done.output and str(path) in done.output
    assert not out.exists()
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(out), "--keep-uncounted"])
    assert done.exit_code == 0, done.output
    kept = {r["task_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert (kept["dead"]["n_counted"], kept["dead"]["pass_rate"]) == (0, None)
    assert kept["ok"]["pass_rate"] == 0.5


def test_synth_from_tasks_draws_trials_for_the_real_task_ids(make_task: MakeTask,
                                                             tmp_path: Path) -> None:
    """The trials name the tasks given (their labels then match them); the models and the
    source stay synthetic."""
    make_task("alpha")
    make_task("bravo")
    trials = tmp_path / "t.jsonl"
    done = runner.invoke(cli_app(), ["synth", "-o", str(trials), "--from-tasks",
                                     str(tmp_path / "tasks"), "--model", "synthetic-x:4"])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in trials.read_text().splitlines()]
    assert {r["task_id"] for r in rows} == {"alpha", "bravo"}
    assert {(r["model"], r["source"]) for r in rows} == {("synthetic-x", "synthetic")}
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = runner.invoke(cli_app(), ["synth", "-o", str(tmp_path / "e.jsonl"),
                                        "--from-tasks", str(empty)])
    assert refused.exit_code == 1
    assert "no task dir there" in " ".join(refused.output.split())


def test_labels_says_which_unattested_tasks_it_leaves_out(tmp_path: Path) -> None:
    rows = [trial("plain", attested=True), trial("bash-only", passed=True, attested=False)]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    out = tmp_path / "l.jsonl"
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "unattested" in done.output and "bash-only" in done.output
    assert [json.loads(line)["task_id"] for line in out.read_text().splitlines()] == ["plain"]
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(out),
                                     "--include-unattested"])
    assert done.exit_code == 0, done.output
    assert "including 1 unattested" in " ".join(done.output.split())
    kept = {r["task_id"]: r["attested"] for r in map(json.loads, out.read_text().splitlines())}
    assert kept == {"bash-only": False, "plain": True}


def test_the_labels_summary_keeps_attested_and_unattested_pass_rates_apart(
        tmp_path: Path) -> None:
    """Issue 44, item 12: one pass@1 (0.7500) mixed a vouched 0.5 with test.sh's own 1.0."""
    rows = [trial("a", "m1", attempt=i, passed=i == 0, attested=True) for i in range(2)]
    rows += [trial("b", "m1", attempt=i, passed=True, attested=False) for i in range(2)]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(tmp_path / "l.jsonl"),
                                     "--include-unattested"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert "attested 0.5000 (1), unattested 1.0000 (1)" in done.output, done.output
    assert "0.7500" not in done.output
