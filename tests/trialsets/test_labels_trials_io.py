"""Reading trial JSONL: strict errors naming file:line and field, warnings with counts."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from termgrade.core.errors import DataWarning, RecordError
from termgrade.records import TrialRecord
from termgrade.trialsets import iter_trial_records, read_trials, write_trials
from termgrade.trialsets.fastpath import fast_read, nonblank_lines
from termgrade.trialsets.frame import frame_from_records, frame_from_table
from termgrade.trialsets.io import read_trial_frame
from tests.support.labels import small_corpus_file, trial, write_jsonl
from tests.support.trial_strategies import optional


def read_quietly(*paths: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return read_trials(list(paths))


def error_of(path: Path) -> str:
    with pytest.raises(RecordError) as info:
        read_quietly(path)
    return str(info.value)


def test_round_trip_of_a_synthetic_corpus(tmp_path: Path) -> None:
    path = small_corpus_file(tmp_path / "trials.jsonl", n_tasks=20)
    records = list(iter_trial_records(path))
    trials = read_quietly(path)
    assert len(trials.frame) == len(records)
    assert trials.frame["counted"].sum() == sum(r.counted for r in records)
    again = tmp_path / "again.jsonl"
    write_trials(again, records)
    assert [r.model_dump() for r in iter_trial_records(again)] == [r.model_dump()
                                                                    for r in records]


def both_paths(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    data = path.read_bytes()
    lines = nonblank_lines(data)
    table = fast_read(data, TrialRecord, lines)
    assert table is not None, "the fast path should vouch for a valid file"
    fast = frame_from_table(table, str(path), lines)
    slow = frame_from_records([TrialRecord.model_validate_json(x) for x in data.splitlines()
                               if x.strip()], str(path), lines)
    return fast, slow


def test_fast_path_and_exact_path_give_the_same_frame(tmp_path: Path) -> None:
    path = small_corpus_file(tmp_path / "trials.jsonl", n_tasks=15)
    fast, slow = both_paths(path)
    pd.testing.assert_frame_equal(fast, slow, check_dtype=False)
    assert fast["failed_test"].notna().sum() > 0


@pytest.mark.slow
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.booleans(), st.booleans(), optional), min_size=1, max_size=8),
       defaults=st.booleans())
def test_fast_path_agrees_with_pydantic(tmp_path: Path, rows: list[Any],
                                        defaults: bool) -> None:
    records = [trial(f"t{i}", attempt=0, passed=p, counted=c, **extra)
               for i, (p, c, extra) in enumerate(rows)]
    if defaults:  # keys with defaults left out
        for record in records:
            del record["retry_index"]
    path = write_jsonl(tmp_path / "prop.jsonl", records)
    fast, slow = both_paths(path)
    pd.testing.assert_frame_equal(fast, slow, check_dtype=False)


@pytest.mark.parametrize(("mutate", "field"), [
    (lambda r: r.pop("task_id"), "task_id"),
    (lambda r: r.pop("reward"), "reward"),
    (lambda r: r.update(attempt="first"), "attempt"),
    (lambda r: r.update(attempt=-1), "attempt"),
    (lambda r: r.update(duration_s=-5.0), "duration_s"),
    (lambda r: r.update(surprise=1), "surprise"),
    (lambda r: r.update(tests=None), "tests"),
    (lambda r: r.update(tests=[{"name": "test_x"}]), "tests.0.outcome"),
    (lambda r: r.update(tests=[{"name": "test_x", "outcome": "passed", "why": 1}]),
     "tests.0.why"),
    (lambda r: r.update(counted="maybe"), "counted"),
])
def test_malformed_records_name_file_line_and_field(tmp_path: Path, mutate: Any,
                                                   field: str) -> None:
    rows = [trial("a"), trial("b"), trial("c")]
    mutate(rows[2])
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    message = error_of(path)
    assert f"{path}:3" in message
    assert f"'{field}'" in message
    assert "fix:" in message


def test_invalid_json_and_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(trial("a")) + "\n\n" + '{"task_id": "b", ' + "\n")
    message = error_of(path)
    assert f"{path}:3" in message and "not valid JSON" in message


def test_two_records_on_one_line_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "joined.jsonl"
    path.write_text(json.dumps(trial("a")) + " " + json.dumps(trial("b")) + "\n")
    assert f"{path}:1" in error_of(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert "no such file" in error_of(tmp_path / "nope.jsonl")
    assert "directory" in error_of(tmp_path)


def test_nan_reward_is_a_counted_warning_not_a_zero(tmp_path: Path) -> None:
    rows = [trial("a", attempt=i, passed=True) for i in range(3)]
    rows.append(trial("a", attempt=3))
    rows[3]["reward"] = float("nan")
    rows.append(trial("a", attempt=4, counted=True))
    rows[4]["reward"] = None
    path = write_jsonl(tmp_path / "nan.jsonl", rows)
    with pytest.warns(DataWarning, match="NaN reward"):
        trials = read_trials([path])
    kinds = {i.kind: i.count for i in trials.issues}
    assert kinds == {"nan_reward": 1, "unscored_counted": 1}
    frame = trials.frame
    assert frame["counted"].sum() == 3
    assert math.isnan(frame.loc[3, "reward"])


@pytest.mark.parametrize(("row", "what"), [
    (trial("a", passed=True, counted=False) | {"passed": True}, "counted=false"),
    (trial("a") | {"passed": True}, "reward < 1"),
    (trial("a") | {"reward": 1.0}, "reward >= 1"),
])
def test_contradictory_passed_flags_are_errors(tmp_path: Path, row: dict[str, Any],
                                               what: str) -> None:
    path = write_jsonl(tmp_path / "contra.jsonl", [trial("z"), row])
    message = error_of(path)
    assert f"{path}:2" in message and "'passed'" in message and what in message


def test_duplicate_trial_ids_are_errors(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "one.jsonl", [trial("a")])
    with pytest.raises(RecordError, match="appears 2 times"):
        read_quietly(first, first)


def test_duplicate_counted_attempt_keeps_the_latest_retry(tmp_path: Path) -> None:
    rows = [trial("a", attempt=0, passed=False, retry=0),
            trial("a", attempt=0, passed=True, retry=1), trial("a", attempt=1)]
    path = write_jsonl(tmp_path / "dup.jsonl", rows)
    with pytest.warns(DataWarning, match="more than one counted trial"):
        trials = read_trials([path])
    counted = trials.frame[trials.frame["counted"]]
    assert len(counted) == 2 and counted["passed"].sum() == 1


def test_an_empty_file_is_reported(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    full = write_jsonl(tmp_path / "full.jsonl", [trial("a")])
    with pytest.warns(DataWarning, match="holds no trial records"):
        trials = read_trials([empty, full])
    assert len(trials.frame) == 1
    assert read_trial_frame(empty).empty
