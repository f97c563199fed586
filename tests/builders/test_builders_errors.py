"""Bad input: a clear error naming the record, and nothing half-written in dist/."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from termgrade.builders.environments import build_environments
from termgrade.builders.errors import BuildError
from termgrade.builders.trajectories import build_trajectories
from termgrade.core.errors import DataWarning, RecordError
from termgrade.records import SplitRow
from termgrade.task.errors import TaskLoadError
from tests.support.records import label, trial, verified, write_jsonl, write_trials
from tests.support.task_dirs import MakeTask


def assert_nothing_written(dist: Path) -> None:
    assert not dist.exists() or list(dist.iterdir()) == [], list(dist.iterdir())


@pytest.fixture
def two_tasks(make_task: MakeTask) -> Path:
    make_task("alpha")
    return make_task("bravo").parent


def test_missing_label_names_task_and_model(two_tasks: Path, tmp_path: Path) -> None:
    labels = write_jsonl(tmp_path / "labels.jsonl", [label("alpha", "model-a", 0.5)])
    dist = tmp_path / "dist"
    with pytest.raises(RecordError, match=r"no label for task 'bravo' under model 'model-a'"):
        build_environments(dist / "env", task_roots=[two_tasks], labels=labels)
    assert_nothing_written(dist)


def test_label_schema_violation_names_line_record_and_field(two_tasks: Path,
                                                            tmp_path: Path) -> None:
    good = label("alpha", "model-a", 0.5).model_dump(mode="json")
    bad = {**label("bravo", "model-a", 0.5).model_dump(mode="json"), "pass_rate": 1.5}
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(RecordError, match=r"labels.jsonl:2 \(task_id=bravo\).*pass_rate"):
        build_environments(tmp_path / "dist" / "env", task_roots=[two_tasks], labels=path)


def test_split_for_unknown_task(two_tasks: Path, tmp_path: Path) -> None:
    splits = write_jsonl(tmp_path / "s.jsonl", [SplitRow(task_id="zulu", split="train151",
                                                         pass_rate=0.5)])
    with pytest.raises(RecordError, match=r"s.jsonl:1.*unknown task 'zulu'"):
        build_environments(tmp_path / "dist" / "env", task_roots=[two_tasks], splits=splits)


def test_duplicate_task_id_across_roots(make_task: MakeTask, tmp_path: Path) -> None:
    first = make_task("alpha").parent
    other = tmp_path / "other" / "alpha"
    other.parent.mkdir()
    (first / "alpha").rename(other)
    make_task("alpha")
    with pytest.raises(TaskLoadError, match="duplicate task id 'alpha'"):
        build_environments(tmp_path / "dist" / "env", task_roots=[first, other.parent])
    assert_nothing_written(tmp_path / "dist")


def test_stale_verify_record(two_tasks: Path, tmp_path: Path) -> None:
    record = verified(two_tasks / "alpha")
    (two_tasks / "alpha" / "instruction.md").write_text("Changed since it was verified.\n")
    verify = write_jsonl(tmp_path / "v.jsonl", [record])
    with pytest.raises(BuildError, match=r"(?s)verify record of alpha.*rerun `termgrade verify"):
        build_environments(tmp_path / "dist" / "env", task_roots=[two_tasks], verify=verify)
    assert_nothing_written(tmp_path / "dist")


def test_trial_for_unknown_task_names_line_and_trial(two_tasks: Path, tmp_path: Path) -> None:
    orphan = trial(1, task_id="zulu", messages=False)
    orphan.episode = None  # no transcript to take the instruction from either
    path = write_trials(tmp_path / "t.jsonl", [trial(0), orphan])
    dist = tmp_path / "dist"
    with pytest.raises(RecordError, match=r"t.jsonl:2 \(trial zulu__1\).*unknown task 'zulu'"):
        build_trajectories(dist / "traj", trials=path, task_roots=[two_tasks])
    assert_nothing_written(dist)


def test_a_trial_without_its_task_dir_takes_the_instruction_from_its_transcript(
        two_tasks: Path, tmp_path: Path) -> None:
    path = write_trials(tmp_path / "t.jsonl", [trial(0), trial(1, task_id="zulu")])
    with pytest.warns(DataWarning, match=r"1 task\(s\) have no task dir.*'zulu'"):
        summary = build_trajectories(tmp_path / "traj", trials=path, task_roots=[two_tasks])
    assert summary.stats.from_transcript == {"zulu"}
    rows = pq.read_table(tmp_path / "traj" / "data" / "episodes").to_pylist()
    tasks = {r["trial_id"]: r["task_id"]
             for r in pq.read_table(tmp_path / "traj" / "data" / "sft").to_pylist()}
    by_task = {tasks[r["trial_id"]]: r["instruction"] for r in rows}
    assert by_task["zulu"] == "Write hello.\n\n  keep spaces  "  # its first user message
    assert by_task["alpha"] == "Write hello to /app/out.txt.\n"  # instruction.md


def test_trial_schema_violation_names_field(two_tasks: Path, tmp_path: Path) -> None:
    bad = trial(0).model_dump(mode="json")
    bad["per_turn"][0]["input_tokens"] = -5
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(RecordError, match=r"t.jsonl:1 \(trial_id=alpha__0\).*per_turn.0.input"):
        build_trajectories(tmp_path / "dist" / "traj", trials=path, task_roots=[two_tasks])


def test_duplicate_trial_id(two_tasks: Path, tmp_path: Path) -> None:
    path = write_trials(tmp_path / "t.jsonl", [trial(0), trial(0)])
    with pytest.raises(RecordError, match=r"t.jsonl:2.*duplicate trial_id 'alpha__0'"):
        build_trajectories(tmp_path / "dist" / "traj", trials=path, task_roots=[two_tasks])


def test_row_over_budget_names_the_trial(two_tasks: Path, tmp_path: Path) -> None:
    path = write_trials(tmp_path / "t.jsonl", [trial(0), trial(1, frame="y" * 300_000)])
    dist = tmp_path / "dist"
    with pytest.raises(BuildError, match=r"t.jsonl:2 \(trial alpha__1\): row is .* over the "
                                         "200,000 byte row budget"):
        build_trajectories(dist / "traj", trials=path, task_roots=[two_tasks],
                           row_group_bytes=200_000)
    assert_nothing_written(dist)


def test_existing_output_needs_force_and_survives_a_failed_rebuild(two_tasks: Path,
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "dist" / "env"
    build_environments(out, task_roots=[two_tasks])
    before = (out / "README.md").read_bytes()
    with pytest.raises(BuildError, match=r"(?s)already exists.*--force"):
        build_environments(out, task_roots=[two_tasks])
    stale = verified(two_tasks / "bravo").model_copy(update={"task_digest": "0" * 64})
    verify = write_jsonl(tmp_path / "v.jsonl", [stale])
    with pytest.raises(BuildError, match="verify record of bravo"):  # fails mid-staging
        build_environments(out, task_roots=[two_tasks], verify=verify, overwrite=True)
    assert (out / "README.md").read_bytes() == before
    assert [p.name for p in out.parent.iterdir()] == ["env"]
    build_environments(out, task_roots=[two_tasks], overwrite=True)
