"""The viewer's index: its numbers are the report's, and a trial reads from its own line."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from termgrade.core.errors import DataWarning, RecordError
from termgrade.labels import compute_labels, write_labels
from termgrade.passrates import PassRateOptions, build_report, load_inputs
from termgrade.trialsets import read_trials
from termgrade.view import find_sources, load_run
from termgrade.view.reasons import INFRASTRUCTURE, INTEGRITY, PASSED, TESTS, classify
from termgrade.view.scan import scan_file
from tests.support.view_runs import FINDINGS, hostile_run, synthetic_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("synth") / "run")


def _index(path: Path, labels: Path | None = None):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return load_run(find_sources(path, labels))


def test_the_viewer_and_the_report_agree_on_the_same_run(run_dir: Path) -> None:
    index = _index(run_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        report = build_report(load_inputs([run_dir / "trials.jsonl"]),
                              PassRateOptions(n_boot=0, plots=False))
        labels = compute_labels(read_trials([run_dir / "trials.jsonl"])).frame
    assert [c.model_dump() for c in index.configs] == [c.model_dump() for c in report.configs]
    assert report.near_misses is not None
    assert index.near_misses.model_dump() == report.near_misses.model_dump()
    assert int(index.trials["near_miss"].sum()) == report.near_misses.total > 0
    cells = index.cells.set_index(["task_id", "model", "scaffold"]).sort_index()
    expect = labels.set_index(["task_id", "model", "scaffold"]).sort_index()
    assert list(cells.index) == list(expect.index)
    for column in ("pass_rate", "band", "n_counted", "n_passed", "k"):
        pd.testing.assert_series_equal(cells[column], expect[column], check_names=False,
                                       check_dtype=False)
    # lost trials are the uncounted ones, and the sparkline has one bar per trial
    frame = read_trials([run_dir / "trials.jsonl"]).frame
    lost = (~frame["counted"]).groupby([frame[k] for k in ("task_id", "model",
                                                           "scaffold")]).sum()
    assert cells["n_lost"].sum() == int(lost.sum()) > 0
    first = index.cells.iloc[0]
    bars = index.rewards(first["task_id"], first["model"], first["scaffold"])
    assert len(bars) == first["n_trials"]


def test_labels_from_a_file_are_used_as_given_when_they_count_the_trials_shown(
        run_dir: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        label_set = compute_labels(read_trials([run_dir / "trials.jsonl"]))
        write_labels(tmp_path / "labels.jsonl", label_set)
        cut = compute_labels(read_trials([run_dir / "trials.jsonl"]), k=2)
        write_labels(tmp_path / "k2.jsonl", cut)
    index = _index(run_dir, tmp_path / "labels.jsonl")
    assert index.sources.labels == tmp_path / "labels.jsonl"
    assert "checked against these trials" in index.sources.labels_said()
    # labels of other trials (here: cut to k=2) beside these trials would mix two sets
    with pytest.raises(RecordError, match=r"--labels: .* counts 2 trial"):
        _index(run_dir, tmp_path / "k2.jsonl")


def test_a_labels_file_in_the_folder_is_named_not_used(run_dir: Path,
                                                       tmp_path: Path) -> None:
    """Issue 44, item 2: a labels file lying in DIR was used unasked: the grid counted its
    12 trials while the near-miss panel of the same page counted the folder's 42."""
    folder = tmp_path / "run"
    folder.mkdir()
    lines = (run_dir / "trials.jsonl").read_text().splitlines()
    (folder / "trials.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "few.jsonl").write_text("\n".join(lines[:12]) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        write_labels(folder / "labels.jsonl", compute_labels(read_trials([tmp_path /
                                                                          "few.jsonl"])))
        expect = compute_labels(read_trials([folder / "trials.jsonl"])).frame
    index = _index(folder)
    assert index.sources.labels is None
    assert index.sources.unused_labels == (folder / "labels.jsonl",)
    assert "computed from these trials" in index.sources.labels_said()
    assert int(index.cells["n_counted"].sum()) == int(expect["n_counted"].sum()) > 12


def test_the_index_frame_is_the_strict_readers_and_reads_trials_by_offset(
        run_dir: Path) -> None:
    index = _index(run_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        strict = read_trials([run_dir / "trials.jsonl"]).frame
    ours = index.trials.sort_values("line", ignore_index=True)
    for column in strict.columns:
        pd.testing.assert_series_equal(ours[column], strict[column], check_names=False)
    lines = (run_dir / "trials.jsonl").read_bytes().split(b"\n")
    for row in (0, len(index.trials) // 2, len(index.trials) - 1):
        record = index.trial(row)
        assert record.trial_id == index.trials.iloc[row]["trial_id"]
        raw = json.loads(lines[int(index.trials.iloc[row]["line"]) - 1])
        assert record.model_dump(mode="json", exclude_none=True) == {
            k: v for k, v in record.model_validate(raw).model_dump(
                mode="json", exclude_none=True).items()}


def test_the_exact_path_gives_the_fast_paths_frame(run_dir: Path, tmp_path: Path) -> None:
    """A block the pyarrow path cannot vouch for (a null where the model forbids one)
    goes through pydantic line by line: same rows, same offsets."""
    fast = scan_file(run_dir / "trials.jsonl")
    text = (run_dir / "trials.jsonl").read_text()
    odd = tmp_path / "trials.jsonl"
    odd.write_text(text.replace('"source": "synthetic"', '"source": "synthetic", '
                                '"cached_tokens": null', 1).replace(
        '"schema_version": "1.0"', '"schema_version":"1.0"'), encoding="utf-8")
    exact = scan_file(odd, block_bytes=4096)
    assert fast is not None and exact is not None
    assert list(exact["trial_id"]) == list(fast["trial_id"])
    assert np.array_equal(exact["reward"].fillna(-1), fast["reward"].fillna(-1))
    data = odd.read_bytes()
    for offset, length, trial_id in zip(exact["offset"], exact["length"], exact["trial_id"],
                                        strict=True):
        assert json.loads(data[offset:offset + length])["trial_id"] == trial_id


def test_reasons_say_why_a_trial_scored_zero(tmp_path: Path) -> None:
    index = _index(hostile_run(tmp_path / "run"))
    assert list(index.trials["reason"]) == [INTEGRITY, INTEGRITY, PASSED]
    assert classify(passed=False, counted=True) == TESTS
    assert classify(passed=False, counted=False, message="x") == INFRASTRUCTURE
    assert classify(passed=False, counted=True, message="tests/test.sh: timed out after 9 s"
                    ) == "timeout"
    assert classify(passed=False, counted=True, message="the agent wrote 900 MiB to the "
                    "container's disk, over its 512 MiB limit") == "limit"
    from termgrade.view.reasons import tamper_findings

    assert tamper_findings(index.trial(0).exception_message) == list(FINDINGS)


def test_bad_input_names_the_file_and_the_fix(tmp_path: Path, run_dir: Path) -> None:
    with pytest.raises(RecordError, match="does not exist"):
        find_sources(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordError, match=r"no \.jsonl file.*\n  fix: pass the folder"):
        find_sources(tmp_path / "empty")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "x.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(RecordError, match=r"no trial records \(found: x.jsonl"):
        find_sources(notes)
    with pytest.raises(RecordError, match="--labels: not a labels file"):
        find_sources(run_dir, run_dir / "trials.jsonl")
    broken = tmp_path / "broken"
    broken.mkdir()
    good = (run_dir / "trials.jsonl").read_text().splitlines()[0]
    (broken / "trials.jsonl").write_text(good + "\n" + good.replace('"reward": ', '"reward": "x'
                                                                    '", "r": ', 1) + "\n")
    with pytest.raises(RecordError, match=r"trials.jsonl:2"):
        load_run(find_sources(broken))
