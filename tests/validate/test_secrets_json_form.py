"""Issue 44, item 6: a key an agent printed on a line of its own was flagged in the Hub
trace file (its JSON string ``"wJalr...\\n"`` is a quoted run the Base64 plugin scores)
and passed in the ``sft``, ``episodes`` and ``traces`` cells holding the same text."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from detect_secrets.settings import default_settings
from typer.testing import CliRunner

from termgrade.builders.layout import RepoPaths
from termgrade.builders.trajectories import build_trajectories
from termgrade.cli import app
from termgrade.records import ChatMessage, EpisodeStep, TrialRecord
from termgrade.validate.cell_secrets import scan_texts
from termgrade.validate.secrets_check import scan
from termgrade.validate.secrets_json_form import json_form
from tests.support.task_dirs import MakeTask

KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3x9Lk2Pa"
OUTPUT = f"{KEY}\n"  # `cat key.txt`: the key on a line of its own


def _repo(tmp_path: Path, make_task: MakeTask) -> Path:
    make_task("alpha")
    trial = TrialRecord(
        trial_id="alpha__0", task_id="alpha", model="org/model-a", scaffold="terminus-2",
        attempt=0, reward=0.0, passed=False, counted=True, source="jobs/run-1",
        messages=[ChatMessage(role="user", content="Show me the key."),
                  ChatMessage(role="assistant", content="Running cat."),
                  ChatMessage(role="user", content=OUTPUT)],
        episode=[EpisodeStep(index=0, source="agent", message="cat",
                             keystrokes=["cat key.txt\n"], observation=OUTPUT)])
    trials = tmp_path / "t.jsonl"
    trials.write_text(trial.model_dump_json() + "\n")
    out = tmp_path / "dist" / "traj"
    build_trajectories(out, trials=trials, task_roots=[tmp_path / "tasks"], repo_id="org/traj")
    return out


def test_a_text_flagged_in_its_trace_file_is_flagged_in_every_cell_holding_it(
        tmp_path: Path, make_task: MakeTask) -> None:
    repo = _repo(tmp_path, make_task)
    hits = [h for h in scan(RepoPaths(repo))[0] if not h.known_false_positive]
    trace = [h for h in hits if h.file.startswith("traces/")]
    assert [(h.line, h.type) for h in trace] == [(4, "Base64 High Entropy String")]
    flagged = {h.file for h in hits if h.row is not None}
    holding = {RepoPaths(repo).rel(p) for p in RepoPaths(repo).parquet_files()
               if KEY in str(pq.read_table(p).to_pylist())}
    assert {f.split("/")[1] for f in holding} >= {"sft", "traces"}
    assert flagged == holding, hits
    assert all(h.line == 1 for h in hits if h.row is not None)
    # The review marks the line that holds the key, in the trace file and in the cells.
    listed = CliRunner().invoke(app, ["secrets", "review", str(repo), "--list"],
                                env={"COLUMNS": "400"})
    assert listed.exit_code == 0, listed.output
    marked = [line for line in listed.output.splitlines() if line.lstrip().startswith(">")]
    assert len(marked) == len({(h.file, h.hashed_secret) for h in hits})
    assert all(KEY in line for line in marked), marked
    assert "alpha__0.jsonl line 4" in listed.output


def test_a_json_form_finding_is_placed_on_the_line_of_the_cell_that_holds_it() -> None:
    text = f'$ echo "\n{KEY}\n"\ndone'  # a quoted run in JSON form from line 1 to 3
    form, starts = json_form(text)
    assert form[starts[1]:].startswith(KEY)
    with default_settings():
        found = scan_texts([text, "plain words\nnothing\n"])
    assert [(line, kind) for line, kind, _ in found[text]] == [
        (2, "Base64 High Entropy String")]
    assert "plain words\nnothing\n" not in found
