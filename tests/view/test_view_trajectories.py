"""A staged trajectories repo, viewed: its trials come back as they went in."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest

from termgrade.builders.trajectories import build_trajectories
from termgrade.core.errors import DataWarning, RecordError
from termgrade.records import SplitRow
from termgrade.trialsets import iter_trial_records
from termgrade.view import find_sources, load_run
from termgrade.view.filters import Filters
from tests.support.view_runs import synthetic_run


def test_a_trajectories_repo_is_read_back_trial_for_trial(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run", tasks=6)
    repo = tmp_path / "traj"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        build_trajectories(repo, trials=run / "trials.jsonl", task_roots=[],
                           row_group_bytes=200_000)
        index = load_run(find_sources(repo, workdir=tmp_path / "work"))
    originals = {r.trial_id: r for r in iter_trial_records(run / "trials.jsonl")}
    assert len(index.trials) == len(originals)
    for row in range(len(index.trials)):
        back = index.trial(row)
        original = originals[back.trial_id].model_dump(mode="json")
        rebuilt = back.model_dump(mode="json")
        assert rebuilt["episode"] == original["episode"]
        differ = {k for k in original if original[k] != rebuilt[k]}
        # synthetic trials carry no messages; the repo derives them from the episode
        assert differ <= {"messages", "messages_source"}, differ
        if original["episode"]:
            assert rebuilt["messages_source"] == "episode-rebuilt"
    assert index.sources.origin == repo
    assert (tmp_path / "work" / "splits.jsonl").read_text() == ""  # built without --splits


def test_splits_feed_the_split_filter(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run", tasks=4, transcripts=False)
    splits = tmp_path / "splits.jsonl"
    splits.write_text("".join(
        SplitRow(task_id=f"synthetic-task-{i:04d}", split="train151" if i % 2 else "unseen",
                 pass_rate=0.5).model_dump_json() + "\n" for i in range(1, 5)))
    sources = dataclasses.replace(find_sources(run), splits=splits)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        index = load_run(sources)
    chosen = index.cells[Filters(split="train151").cell_mask(index.cells)]
    assert sorted(set(chosen["task_id"])) == ["synthetic-task-0001", "synthetic-task-0003"]
    assert json.loads(splits.read_text().splitlines()[0])["split"] == "train151"


def test_a_repo_needs_a_working_folder(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run", tasks=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        build_trajectories(tmp_path / "traj", trials=run / "trials.jsonl", task_roots=[])
    with pytest.raises(RecordError, match="trajectories repo"):
        find_sources(tmp_path / "traj")
