"""`termgrade labels` and task versions: trials of one task graded at different versions
of its files (``task_digest``) are refused unless ``--mix-digests``; a label row carries
the digests its trials agree on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.labels import compute_labels
from termgrade.labels.errors import MixedDigestsError
from termgrade.trialsets import read_trials
from tests.support.labels import cli_app, trial, write_jsonl

runner = CliRunner()


def _trials(tmp_path: Path, *, b_second: str | None) -> Path:
    rows = [trial("a", "m", i, passed=True, task_digest="a1", scaffold_digest="s")
            for i in range(2)]
    rows += [trial("b", "m", 0, task_digest="b1", scaffold_digest="s"),
             trial("b", "m", 1, task_digest=b_second, scaffold_digest="s"),
             trial("c", "m", 0), trial("c", "m", 1)]  # written before digests
    return write_jsonl(tmp_path / "t.jsonl", rows)


def test_one_version_per_task_labels_and_carries_the_digests(tmp_path: Path) -> None:
    labels = compute_labels(read_trials([_trials(tmp_path, b_second="b1")]))
    rows = {r.task_id: r for r in labels.rows()}
    assert (rows["a"].task_digest, rows["a"].scaffold_digest) == ("a1", "s")
    assert rows["b"].task_digest == "b1"
    assert (rows["c"].task_digest, rows["c"].scaffold_digest) == (None, None)
    # a trial without a digest beside ones with it is no mix
    labels = compute_labels(read_trials([_trials(tmp_path, b_second=None)]))
    assert {r.task_id: r.task_digest for r in labels.rows()}["b"] == "b1"


def test_mixed_versions_are_refused_unless_told(tmp_path: Path) -> None:
    path = _trials(tmp_path, b_second="b2")
    with pytest.raises(MixedDigestsError, match="1 task") as caught:
        compute_labels(read_trials([path]))
    assert "b" in str(caught.value) and "--mix-digests" in str(caught.value)
    labels = compute_labels(read_trials([path]), mix_digests=True)
    rows = {r.task_id: r for r in labels.rows()}
    assert rows["b"].task_digest is None and rows["b"].n_counted == 2
    assert rows["a"].task_digest == "a1"


def test_the_cli_refuses_with_the_flag_to_allow_it(tmp_path: Path) -> None:
    path = _trials(tmp_path, b_second="b2")
    out = tmp_path / "labels.jsonl"
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(out)])
    assert done.exit_code == 1
    assert "different versions" in done.output and "--mix-digests" in done.output
    assert not out.exists()
    done = runner.invoke(cli_app(), ["labels", str(path), "-o", str(out), "--mix-digests"])
    assert done.exit_code == 0, done.output
    rows = {r["task_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["b"]["task_digest"] is None and rows["a"]["task_digest"] == "a1"


def test_one_scaffold_name_under_two_configurations_is_said(tmp_path: Path) -> None:
    """Native terminus-2 trials (a scaffold digest) pooled with ingested Harbor ones (none)
    under one model: labelled, and an issue names the row; one configuration: no issue."""
    rows = [trial("a", "m", 0, passed=True, scaffold="terminus-2", scaffold_digest="native"),
            trial("a", "m", 1, scaffold="terminus-2"),  # ingested: no digest
            trial("b", "m", 0, scaffold="terminus-2", scaffold_digest="native"),
            trial("b", "m", 1, passed=True, scaffold="terminus-2", scaffold_digest="native")]
    with pytest.warns(UserWarning, match="different configurations"):
        labels = compute_labels(read_trials([write_jsonl(tmp_path / "t.jsonl", rows)]))
    mixed = [i for i in labels.issues if i.kind == "mixed_scaffolds"]
    assert len(mixed) == 1 and mixed[0].count == 1 and "a x m (terminus-2)" in mixed[0].message
    assert labels.frame.set_index("task_id").loc["a", "n_counted"] == 2  # pooled, as before
    same = compute_labels(read_trials([write_jsonl(tmp_path / "u.jsonl", rows[2:])]))
    assert not [i for i in same.issues if i.kind == "mixed_scaffolds"]
