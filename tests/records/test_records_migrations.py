"""One version scheme: a record format declares its current version and a migration per
older version it still reads; every reader (the JSONL reader, the trial reader's pyarrow fast
path, the journals) goes through the one place that applies them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from termgrade.core.errors import RecordError
from termgrade.records.jsonl import iter_jsonl, parse_lines
from termgrade.records.trial import TrialRecord
from termgrade.records.version import RecordFormat, record_format, validate_record
from termgrade.trialsets.fastpath import fast_read, nonblank_lines
from termgrade.trialsets.io import read_trials
from tests.support.labels import trial


def _from_0_8(record: dict[str, Any]) -> dict[str, Any]:
    """0.8 called the reward ``score``."""
    out = {k: v for k, v in record.items() if k != "score"}
    return {**out, "reward": record.get("score"), "schema_version": "0.9"}


def _from_0_9(record: dict[str, Any]) -> dict[str, Any]:
    """0.9 files lack ``counted``: a scored record counted."""
    return {**record, "counted": record.get("reward") is not None, "schema_version": "1.0"}


DEMO = RecordFormat(schema="demo", version="1.0", writer="demo write",
                    migrations={"0.8": _from_0_8, "0.9": _from_0_9})


class Demo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    reward: float | None
    counted: bool
    schema_version: Annotated[str, DEMO] = "1.0"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_older_versions_are_upgraded_on_read_step_by_step(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", [
        {"name": "new", "reward": 1.0, "counted": True, "schema_version": "1.0"},
        {"name": "old", "reward": None, "schema_version": "0.9"},
        {"name": "older", "score": 0.5, "schema_version": "0.8"},
    ])
    records = [r for _, r in parse_lines(path, path.read_bytes(), Demo)]
    assert [(r.name, r.reward, r.counted, r.schema_version) for r in records] == [
        ("new", 1.0, True, "1.0"), ("old", None, False, "1.0"), ("older", 0.5, True, "1.0")]
    assert [r for _, r in iter_jsonl(path, Demo)] == records
    assert validate_record(Demo, {"name": "x", "reward": 1.0, "schema_version": "0.9"}).counted


def test_a_newer_or_unmigrated_version_is_still_refused_with_the_existing_error(
        tmp_path: Path) -> None:
    for found, hint in (("2.0", "written by a newer TermGrade"), ("0.5", "re-run `demo write`")):
        path = _write(tmp_path / f"{found}.jsonl",
                      [{"name": "x", "reward": 1.0, "counted": True, "schema_version": found}])
        with pytest.raises(RecordError) as info:
            list(parse_lines(path, path.read_bytes(), Demo))
        message = str(info.value)
        assert f"{path}:1" in message and f"version {found!r} is not supported" in message
        assert hint in message
    with pytest.raises(ValidationError, match="newer TermGrade"):
        validate_record(Demo, '{"name": "x", "reward": 1, "counted": true, '
                              '"schema_version": "2.0"}')


def test_a_migrated_record_that_is_still_wrong_names_its_problem(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", [{"name": 3, "reward": None, "schema_version": "0.9"}])
    with pytest.raises(RecordError, match="field 'name'"):
        list(parse_lines(path, path.read_bytes(), Demo))


def test_the_fast_path_leaves_older_versions_to_the_migrating_reader(tmp_path: Path) -> None:
    current = _write(tmp_path / "c.jsonl", [{"name": "a", "reward": 1.0, "counted": True}])
    old = _write(tmp_path / "o.jsonl", [{"name": "a", "reward": 1.0, "schema_version": "0.9"}])
    assert fast_read(current.read_bytes(), Demo, nonblank_lines(current.read_bytes()))
    assert fast_read(old.read_bytes(), Demo, nonblank_lines(old.read_bytes())) is None


def test_an_older_trial_file_reads_through_the_trial_reader(tmp_path: Path,
                                                            monkeypatch: Any) -> None:
    """TrialRecord's own format, given a previous version (test-local: a 0.9 whose files
    lack ``counted``), reads a 0.9 file through read_trials: the fast path declines it and
    the JSONL reader migrates every line."""
    info = TrialRecord.model_fields["schema_version"]
    current = record_format(TrialRecord)
    assert current is not None and current.version == "1.0"
    with_09 = RecordFormat(schema=current.schema, version=current.version,
                           writer=current.writer, migrations={"0.9": _from_0_9})
    index = info.metadata.index(current)
    monkeypatch.setattr(info, "metadata", [*info.metadata])
    info.metadata[index] = with_09
    rows = []
    for i, passed in enumerate((True, False)):
        row = trial("t1", attempt=i, passed=passed, schema_version="0.9")
        del row["counted"]
        rows.append(row)
    path = _write(tmp_path / "old-trials.jsonl", rows)
    data = path.read_bytes()
    assert fast_read(data, TrialRecord, nonblank_lines(data)) is None
    frame = read_trials([path]).frame
    assert list(frame["counted"]) == [True, True]
    assert list(frame["passed"]) == [True, False]


def test_the_fast_path_still_vouches_for_the_rows_arrow_annotations(tmp_path: Path) -> None:
    """The record's nested models carry the dataset rows' Arrow types (LargeStr, Int32):
    the fast path reads them as those types instead of declining the file."""
    messages = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "bash"}]
    path = _write(tmp_path / "t.jsonl", [trial("t1", messages=messages,
                                               per_turn=[{"turn": 0, "input_tokens": 3}])])
    data = path.read_bytes()
    table = fast_read(data, TrialRecord, nonblank_lines(data))
    assert table is not None
    message = table.schema.field("messages").type.value_type
    assert str(message.field("content").type) == "large_string"
    assert str(table.schema.field("per_turn").type.value_type.field("turn").type) == "int32"
