"""One concept, one place: one JSONL reader, one Arrow converter, one near-miss definition,
one test-verdict model, and ``schema_version`` checked whenever a record is read."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from termgrade import records
from termgrade.builders import inputs as builder_inputs
from termgrade.builders.row_buffer import rows_to_table
from termgrade.builders.trajectory_stats import TrajectoryStats
from termgrade.core.errors import DataWarning, RecordError
from termgrade.ingest import harbor as ingest_harbor
from termgrade.labels.io import read_labels
from termgrade.passrates.trialstats import near_misses
from termgrade.records import LabelRow, SplitRow, TrialRecord
from termgrade.records.arrow import TIMESTAMP, arrow_type, model_fields
from termgrade.records.jsonl import iter_jsonl, parse_lines, read_input_bytes
from termgrade.records.near_miss import NEAR_MISS_MIN_PASSED, is_near_miss, near_miss
from termgrade.records.run import RunRecord
from termgrade.records.verdict import FAILED_OUTCOMES, Outcome, TestVerdict, count_outcomes
from termgrade.records.version import RecordFormat, record_format
from termgrade.scoring.verifier import verdict_parsers
from termgrade.selection.io import read_splits
from termgrade.trialsets import iter_trial_records, read_trials
from termgrade.trialsets.fastpath import fast_read, nonblank_lines
from termgrade.verify import record as verify_record
from termgrade.verify.record import VerifyRecord
from termgrade.verify.verdict import Verdict
from tests.support.labels import trial, write_jsonl
from tests.support.trial_strategies import optional


def _label(task: str = "alpha", **extra: Any) -> dict[str, Any]:
    return {"task_id": task, "model": "m", "scaffold": "s", "pass_rate": 0.5, "band": "mid",
            "n_counted": 2, "k": 2, "n_passed": 1, **extra}


def _run(**extra: Any) -> dict[str, Any]:
    return {"job_id": "20260101T000000Z-abc123", "model": "m", "endpoint": "http://x/v1",
            "scaffold": "bash-tool", "k": 8, "k_min": 2, "adaptive": True, "confidence": 0.9,
            "tasks": 3, "started_at": "2026-01-01T00:00:00Z", "termgrade_version": "0", **extra}


def _split(task: str = "alpha", **extra: Any) -> dict[str, Any]:
    return {"task_id": task, "split": "train151", "pass_rate": 0.5, "source": "corpus", **extra}


def _verify(task: str = "alpha", **extra: Any) -> dict[str, Any]:
    return {"task_id": task, "task_digest": "0" * 64, "verdict": "verified",
            "oracle_rewards": [1.0], "nop_reward": 0.0, "n_assertions": 1,
            "tests": [{"name": "test_a", "outcome": "passed"}], "tampered": [],
            "durations": {}, "error": None, **extra}


def _message(read: Callable[[], object]) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        with pytest.raises(RecordError) as info:
            read()
    return str(info.value)


def _first_of(path: Path, model: type[BaseModel]) -> Callable[[], object]:
    return lambda: list(iter_jsonl(path, model))


# -- one JSONL reader ------------------------------------------------------------------

TRIAL_READERS: dict[str, Callable[[Path], Callable[[], object]]] = {
    "builders.iter_jsonl": lambda p: lambda: list(builder_inputs.iter_jsonl(p, TrialRecord)),
    "trials.read_trials": lambda p: lambda: read_trials([p]),
    "trials.iter_trial_records": lambda p: lambda: list(iter_trial_records(p)),
    "records.parse_lines": lambda p: lambda: list(parse_lines(p, read_input_bytes(p),
                                                              TrialRecord)),
}

BAD_TRIAL_LINES: dict[str, tuple[str, str]] = {
    "invalid json": ('{"trial_id": "x", ', "not valid JSON"),
    "missing field": (json.dumps({k: v for k, v in trial("c").items() if k != "reward"}),
                      "field 'reward': Field required"),
    "wrong type": (json.dumps(trial("c", attempt="first")), "field 'attempt'"),
    "unknown key": (json.dumps(trial("c", surprise=1)), "field 'surprise'"),
    "bad outcome": (json.dumps(trial("c", tests=[{"name": "t", "outcome": "meh"}])),
                    "field 'tests.0.outcome'"),
    "bad datetime": (json.dumps(trial("c", started_at="2026-02-30T00:00:00Z")),
                     "field 'started_at'"),
    "unknown version": (json.dumps(trial("c", schema_version="9.0")),
                        "field 'schema_version': version '9.0' is not supported"),
}


@pytest.mark.parametrize("case", sorted(BAD_TRIAL_LINES))
def test_a_bad_trial_file_gives_one_message_from_every_reader(tmp_path: Path,
                                                              case: str) -> None:
    line, needle = BAD_TRIAL_LINES[case]
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(trial("a")) + "\n\n" + line + "\n" + json.dumps(trial("d")) + "\n")
    messages = {name: _message(reader(path)) for name, reader in TRIAL_READERS.items()}
    assert len(set(messages.values())) == 1, messages
    message = next(iter(messages.values()))
    assert f"{path}:3" in message and needle in message, message
    assert "fix:" in message
    if case != "invalid json":
        assert "(trial_id=c__m__" in message and "TrialRecord field" in message


def test_a_schema_error_names_the_schema_file_and_the_command_that_writes_it(
        tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [trial("a", attempt=-1)])
    message = _message(TRIAL_READERS["trials.read_trials"](path))
    assert "schemas/trial.schema.json" in message and "`termgrade ingest`" in message


def test_labels_and_splits_give_one_message_from_every_reader(tmp_path: Path) -> None:
    labels = write_jsonl(tmp_path / "labels.jsonl", [_label(), _label("bravo", pass_rate=1.5)])
    one = {_message(_first_of(labels, LabelRow)), _message(lambda: read_labels([labels]))}
    assert len(one) == 1, one
    assert f"{labels}:2 (task_id=bravo): LabelRow field 'pass_rate'" in one.pop()
    splits = write_jsonl(tmp_path / "splits.jsonl", [_split(split=3)])
    one = {_message(_first_of(splits, SplitRow)), _message(lambda: read_splits([splits]))}
    assert len(one) == 1, one
    assert "schemas/split.schema.json" in one.pop()


def test_missing_files_and_directories_read_alike(tmp_path: Path) -> None:
    for path, needle in ((tmp_path / "nope.jsonl", "no such file"),
                         (tmp_path, "is a directory")):
        messages = {_message(reader(path)) for reader in TRIAL_READERS.values()}
        messages.add(_message(partial(read_labels, [path])))
        assert len(messages) == 1, messages
        assert needle in messages.pop()


# -- one Arrow converter ---------------------------------------------------------------

class Stamped(BaseModel):
    name: str
    when: datetime | None = None


@pytest.mark.parametrize("when", [
    datetime(2026, 10, 8, 12, 30, 0, 123456, tzinfo=timezone(timedelta(hours=2))),
    datetime(2026, 10, 8, 12, 30, tzinfo=UTC),
    datetime(2026, 10, 8, 12, 30, 5),  # naive: taken as UTC on both paths
])
def test_a_datetime_is_the_same_arrow_timestamp_from_both_former_converters(
        when: datetime) -> None:
    record = Stamped(name="x", when=when)
    built = rows_to_table([record.model_dump()], pa.schema(model_fields(Stamped)))
    data = (record.model_dump_json() + "\n").encode()
    read = fast_read(data, Stamped, nonblank_lines(data))
    assert read is not None, "the fast path vouches for pydantic's own output"
    assert built.schema.field("when").type == read.schema.field("when").type == TIMESTAMP
    assert built.column("when").to_pylist() == read.column("when").to_pylist()
    expected = when if when.tzinfo else when.replace(tzinfo=UTC)
    assert read.column("when")[0].as_py() == expected


def test_the_fast_table_is_the_exact_table_datetimes_too(tmp_path: Path) -> None:
    rows = [trial("a", started_at="2026-10-08T12:00:00+02:00", finished_at=None,
                  tests=[{"name": "t", "outcome": "error"}], per_turn=[{"turn": 0}],
                  episode=[{"index": 0, "source": "agent",
                            "timestamp": "2026-10-08T12:00:01.5Z"},
                           {"index": 1, "source": "agent", "timestamp": "2026-10-08 13:00:00"}]),
            trial("b", started_at="2026-10-08T10:00:00Z")]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    data = path.read_bytes()
    table = fast_read(data, TrialRecord, nonblank_lines(data))
    assert table is not None
    records = [r for _, r in parse_lines(path, data, TrialRecord)]
    exact = rows_to_table([r.model_dump() for r in records], pa.schema(model_fields(TrialRecord)))
    for name in TrialRecord.model_fields:  # every column, nested datetimes included
        assert table.schema.field(name).type == exact.schema.field(name).type, name
        assert table.column(name).to_pylist() == exact.column(name).to_pylist(), name
    assert table.column("started_at").to_pylist()[0] == table.column("started_at").to_pylist()[1]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.booleans(), st.booleans(), optional), min_size=1, max_size=6))
def test_whatever_the_fast_path_vouches_for_is_the_exact_table(tmp_path: Path,
                                                               rows: list[Any]) -> None:
    records = [trial(f"t{i}", passed=p, counted=c, **extra)
               for i, (p, c, extra) in enumerate(rows)]
    path = write_jsonl(tmp_path / "prop.jsonl", records)
    data = path.read_bytes()
    table = fast_read(data, TrialRecord, nonblank_lines(data))
    exact = rows_to_table([r.model_dump() for _, r in parse_lines(path, data, TrialRecord)],
                          pa.schema(model_fields(TrialRecord)))
    assert table is not None
    assert table.schema.types == exact.schema.types
    assert table.to_pylist() == exact.to_pylist()


def test_every_fast_path_column_has_the_converters_type(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [trial("a", tests=[
        {"name": "t", "outcome": "passed"}])])
    data = path.read_bytes()
    table = fast_read(data, TrialRecord, nonblank_lines(data))
    assert table is not None
    for name, info in TrialRecord.model_fields.items():
        assert table.schema.field(name).type == arrow_type(info.annotation, info.metadata), name


@pytest.mark.parametrize("value", ['"2026-10-08T12"', '"2026-10-08T12:00:00.1234567Z"',
                                   '"2026-10-08T12:00:00+02"', "1760000000"])
def test_the_fast_path_leaves_datetimes_it_cannot_vouch_for_to_pydantic(value: str) -> None:
    data = (json.dumps(trial("a"))[:-1] + f', "started_at": {value}}}\n').encode()
    assert fast_read(data, TrialRecord, nonblank_lines(data)) is None


# -- one near-miss definition ----------------------------------------------------------

NEAR_MISS_CASES = [  # counted, passed, n_failed, n_passed, near-miss?
    (True, False, 1, NEAR_MISS_MIN_PASSED, True),
    (True, False, 1, NEAR_MISS_MIN_PASSED - 1, False),
    (True, False, 1, NEAR_MISS_MIN_PASSED + 5, True),
    (True, False, 2, NEAR_MISS_MIN_PASSED, False),
    (True, False, 0, NEAR_MISS_MIN_PASSED, False),
    (True, True, 1, NEAR_MISS_MIN_PASSED, False),
    (False, False, 1, NEAR_MISS_MIN_PASSED, False),
    (True, False, None, NEAR_MISS_MIN_PASSED, False),
    (True, False, 1, None, False),
]


def _trial(i: int, counted: bool, passed: bool, failed: int | None,
           passing: int | None) -> dict[str, Any]:
    return {**trial(f"t{i}", counted=counted, passed=passed), "n_tests_failed": failed,
            "n_tests_passed": passing, "turns": 1, "input_tokens": 1, "output_tokens": 1,
            "failed_test": "test_x" if failed == 1 else None, "duration_s": 1.0}


def test_near_miss_is_one_definition_at_its_boundaries() -> None:
    expected = [case[-1] for case in NEAR_MISS_CASES]
    trials = [_trial(i, *case[:-1]) for i, case in enumerate(NEAR_MISS_CASES)]
    assert [is_near_miss(t) for t in trials] == expected
    assert near_miss(*zip(*[case[:-1] for case in NEAR_MISS_CASES], strict=True)).tolist() \
        == expected
    stats = TrajectoryStats()  # the trajectories card's user
    for t in trials:
        stats.add(t)
    assert stats.models[("m", "terminus-2")].one_assertion_misses == sum(expected)
    frame = pd.DataFrame(trials)  # the report's user (NaN for unknown counts)
    frame["n_tests_failed"] = frame["n_tests_failed"].astype("float64")
    frame["n_tests_passed"] = frame["n_tests_passed"].astype("float64")
    report = near_misses(frame)
    assert report.total == sum(expected) and report.min_passed == NEAR_MISS_MIN_PASSED


def test_the_reports_threshold_is_the_definitions_parameter() -> None:
    trials = pd.DataFrame([_trial(0, True, False, 1, 3)])
    assert near_misses(trials, min_passed=3).total == 1
    assert near_misses(trials, min_passed=4).total == 0
    assert is_near_miss(trials.iloc[0], min_passed=3)


# -- one test-verdict model ------------------------------------------------------------

def test_every_former_verdict_model_is_the_one_model() -> None:
    assert verdict_parsers.TestVerdict is TestVerdict
    assert not hasattr(records, "TestResult") and not hasattr(verify_record, "TestRecord")
    assert verdict_parsers.Outcome is Outcome
    assert ingest_harbor.count_outcomes is count_outcomes
    assert TrialRecord.model_fields["tests"].annotation == list[TestVerdict]
    assert VerifyRecord.model_fields["tests"].annotation == list[TestVerdict]


def test_verdict_json_is_unchanged_and_reads_back() -> None:
    verdict = TestVerdict("test_a[1]", Outcome.FAILED)  # positional, as the grader builds it
    assert verdict == TestVerdict(name="test_a[1]", outcome="failed")
    assert verdict.to_json() == {"name": "test_a[1]", "outcome": "failed"}
    line = json.dumps(trial("a", tests=[verdict.to_json()]))
    record = TrialRecord.model_validate_json(line)
    assert record.tests == [verdict] and record.tests[0].outcome is Outcome.FAILED
    assert json.loads(record.model_dump_json())["tests"] == [verdict.to_json()]
    verify = VerifyRecord.model_validate(_verify())
    assert json.loads(verify.model_dump_json())["tests"] == [{"name": "test_a",
                                                              "outcome": "passed"}]
    assert verify.verdict is Verdict.VERIFIED


def test_outcomes_are_checked_and_counted_once() -> None:
    with pytest.raises(ValidationError):
        TestVerdict("t", "meh")
    tests = [TestVerdict("a", "passed"), TestVerdict("b", "failed"), TestVerdict("c", "error"),
             TestVerdict("d", "skipped")]
    assert count_outcomes(tests) == (1, 2) and count_outcomes([]) == (None, None)
    assert "failed" in FAILED_OUTCOMES and "error" in FAILED_OUTCOMES


# -- schema_version checked on read ----------------------------------------------------

RECORDS: dict[str, tuple[type[BaseModel], Callable[..., dict[str, Any]], str]] = {
    "trial": (TrialRecord, lambda **x: trial("a", **x), "termgrade ingest"),
    "label": (LabelRow, _label, "termgrade labels"),
    "split": (SplitRow, _split, "termgrade select"),
    "run": (RunRecord, _run, "termgrade grade"),
    "verify_record": (VerifyRecord, _verify, "termgrade verify"),
}


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_record_declares_its_format(name: str) -> None:
    model, make, writer = RECORDS[name]
    declared = record_format(model)
    assert isinstance(declared, RecordFormat)
    assert declared.schema == name and declared.writer.startswith(writer)
    assert declared.version == model.model_fields["schema_version"].default
    assert model.model_validate(make()).schema_version == declared.version  # absent: current
    assert model.model_validate(make(schema_version=declared.version))


@pytest.mark.parametrize("name", sorted(RECORDS))
@pytest.mark.parametrize(("found", "hint"), [
    ("2.0", "written by a newer TermGrade"), ("1.1", "written by a newer TermGrade"),
    ("0.9", "re-run `"), ("draft", "re-run `")])
def test_an_unknown_schema_version_is_refused_with_how_to_migrate(
        tmp_path: Path, name: str, found: str, hint: str) -> None:
    model, make, writer = RECORDS[name]
    with pytest.raises(ValidationError) as plain:
        model.model_validate(make(schema_version=found))
    assert f"{name} format {found!r} is not supported" in str(plain.value)
    assert hint in str(plain.value)
    path = write_jsonl(tmp_path / "old.jsonl", [make(), make(schema_version=found)])
    message = _message(_first_of(path, model))
    assert f"{path}:2" in message
    assert f"version {found!r} is not supported (this TermGrade reads '1.0')" in message
    assert hint in message.split("fix: ", 1)[1] and writer in message


def test_the_fast_paths_refuse_an_unknown_version_so_the_reader_explains(
        tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [trial("a"), trial("b", schema_version="2.0")])
    data = path.read_bytes()
    assert fast_read(data, TrialRecord, nonblank_lines(data)) is None
    assert "upgrade TermGrade" in _message(lambda: read_trials([path]))
    labels = write_jsonl(tmp_path / "l.jsonl", [_label(schema_version="0.5")])
    message = _message(lambda: read_labels([labels]))
    assert f"{labels}:1" in message and "re-run `termgrade labels`" in message
    current = write_jsonl(tmp_path / "ok.jsonl", [trial("a", schema_version="1.0")])
    data = current.read_bytes()
    assert fast_read(data, TrialRecord, nonblank_lines(data)) is not None


@pytest.mark.parametrize("model", ["audit", "report"])
def test_audit_and_report_files_check_their_version(model: str) -> None:
    from termgrade.audit.records import TaskAudit
    from termgrade.passrates.models import PassRateReport

    cls = TaskAudit if model == "audit" else PassRateReport
    with pytest.raises(ValueError, match="newer TermGrade"):
        cls.model_validate_json('{"schema_version": "9.0"}')
