"""Journals never lose a line (issue 33, item 7).

Every journal reader (grade's ``trials.jsonl``, the verify journal, the generate journal)
goes through :func:`termgrade.records.version.validate_record`: an older version its format
migrates is read, a line it cannot read (a newer version, one bad field) stays in the file
byte for byte and is reported, and only a torn tail (never a whole line) is moved aside.
Before this, ``TrialJournal.load`` rewrote the file without those lines.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.core.errors import RecordError
from termgrade.grade import TRIALS_FILE, TrialJob, TrialJournal, grade_model
from termgrade.grade.record import graded_record
from termgrade.publish.errors import PublishError
from termgrade.publish.journal import PublishJournal
from termgrade.records.journal import TORN_SUFFIX, JsonlJournal, read_journal
from termgrade.records.trial import TrialRecord
from termgrade.records.version import RecordFormat
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.verify import Journal, Verdict, VerifyRecord
from tests.support.labels import trial
from tests.support.task_dirs import MakeTask


def _lines(*rows: dict[str, Any]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_a_newer_version_and_a_bad_field_are_kept_and_reported(tmp_path: Path) -> None:
    path = tmp_path / TRIALS_FILE
    text = _lines(trial("t1"), trial("t2", schema_version="1.1"),
                  trial("t3", attempt=-1), trial("t4"))
    path.write_text(text)
    journal = TrialJournal(path)
    records = journal.load()
    assert [r.task_id for r in records] == ["t1", "t4"]
    assert path.read_text() == text  # nothing rewritten away
    where = [line.where for line in journal.unreadable]
    assert where == [f"{path}:2 (trial_id=t2__m__0__0)", f"{path}:3 (trial_id=t3__m__-1__0)"]
    newer, bad = journal.unreadable
    assert "'1.1'" in newer.problem and "upgrade TermGrade" in newer.fix
    assert "attempt" in bad.problem and "trial.schema.json" in bad.fix
    journal.append(TrialRecord.model_validate(trial("t5")))
    assert path.read_text().startswith(text)  # a resume appends after every kept line
    assert len(TrialJournal(path).load()) == 3


def test_a_torn_tail_moves_aside_and_the_next_record_starts_its_own_line(
        tmp_path: Path) -> None:
    path = tmp_path / TRIALS_FILE
    whole = _lines(trial("t1"), trial("t2", schema_version="9.0"))
    path.write_text(whole + '{"trial_id": "torn by the kill", "ta')
    read = read_journal(path, TrialRecord)
    assert [r.task_id for r in read.records] == ["t1"] and len(read.unreadable) == 1
    assert path.read_text() == whole
    assert read.torn == path.with_name(TRIALS_FILE + TORN_SUFFIX)
    assert read.torn.read_text() == '{"trial_id": "torn by the kill", "ta\n'
    TrialJournal(path).append(TrialRecord.model_validate(trial("t3")))
    assert [r.task_id for r in TrialJournal(path).load()] == ["t1", "t3"]


def test_a_whole_last_record_missing_only_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / TRIALS_FILE
    path.write_text(_lines(trial("t1")) + json.dumps(trial("t2")))
    TrialJournal(path).append(TrialRecord.model_validate(trial("t3")))
    assert [r.task_id for r in TrialJournal(path).load()] == ["t1", "t2", "t3"]
    assert not path.with_name(TRIALS_FILE + TORN_SUFFIX).exists()


def _from_0_9(record: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in record.items() if k != "title"}
    return {**kept, "name": record["title"], "schema_version": "1.0"}


DONE = RecordFormat(schema="done", version="1.0", writer="demo",
                    migrations={"0.9": _from_0_9})


class Done(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: Annotated[str, DONE] = Field("1.0")
    name: str


def test_the_keyed_journal_migrates_older_lines_through_the_version_check(
        tmp_path: Path) -> None:
    path = tmp_path / "done.jsonl"
    text = _lines({"schema_version": "0.9", "title": "a"}, {"name": "b"},
                  {"schema_version": "2.0", "name": "c"})
    path.write_text(text)
    journal = JsonlJournal(path, Done, key="name")
    assert sorted(journal.load()) == ["a", "b"]  # 0.9 migrated, not skipped
    assert [line.where for line in journal.unreadable] == [f"{path}:3"]
    assert path.read_text() == text


def test_the_verify_journal_keeps_a_newer_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "verify.jsonl")
    journal.append(VerifyRecord(task_id="a", task_digest="d" * 64, verdict=Verdict.VERIFIED,
                                oracle_rewards=[1.0], nop_reward=0.0, n_assertions=1,
                                tests=[], tampered=[], durations={}, error=None))
    newer = json.loads(journal.path.read_text())
    newer.update(task_id="b", schema_version="7.0")
    with journal.path.open("a") as handle:
        handle.write(json.dumps(newer) + "\n")
    text = journal.path.read_text()
    assert sorted(journal.load()) == ["a"]
    assert len(journal.unreadable) == 1 and "'7.0'" in journal.unreadable[0].problem
    assert journal.path.read_text() == text


AGENT = ModelAgent(Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None),
                   ScaffoldConfig())


def _passes(job: TrialJob) -> TrialRecord:
    now = datetime.now(UTC)
    return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                         retry_index=job.retry_index, started_at=now, finished_at=now,
                         job_id=job.job_id,
                         outcome=RunOutcome(job.agent.name, VerifierResult(reward=1.0)))


def test_a_resumed_grade_keeps_a_line_written_by_a_newer_termgrade(
        make_task: MakeTask, tmp_path: Path) -> None:
    """The measured case of the issue: versions 1.0 and 1.1 in one file, then a resume."""
    root = make_task("task-a").parent
    out = tmp_path / "out"
    grade_model([root], AGENT, out, k=1, workers=1, progress=False, run=_passes)
    path = out / TRIALS_FILE
    newer = json.loads(path.read_text())
    newer.update(trial_id="from-1.1", schema_version="1.1")
    with path.open("a") as handle:
        handle.write(json.dumps(newer) + "\n")
    before = path.read_text()
    # Issue 44, item 5: the resume stops on it (labels would refuse the file), line kept.
    with pytest.raises(RecordError) as refused:
        grade_model([root], AGENT, out, k=2, workers=1, progress=False, run=_passes)
    assert path.read_text() == before
    assert f"{path}:2" in str(refused.value) and "from-1.1" in str(refused.value)


def test_the_publish_journal_of_a_newer_termgrade_is_kept_and_says_upgrade(
        tmp_path: Path) -> None:
    path = PublishJournal.path_for(tmp_path, "dataset", "me/repo", "main")
    journal = PublishJournal(path, "me/repo", "dataset", "main", "d" * 64, pr_num=3)
    journal.record_chunk(0, "c" * 40, 10)
    newer = json.loads(path.read_text()) | {"schema_version": 2}
    path.write_text(json.dumps(newer))
    with pytest.raises(PublishError, match="format '2' is not supported") as caught:
        PublishJournal.load(path)
    assert "upgrade TermGrade" in str(caught.value)
    assert json.loads(path.read_text()) == newer  # kept as it was
    newer["schema_version"] = 1
    path.write_text(json.dumps(newer))
    loaded = PublishJournal.load(path)
    assert loaded is not None and loaded.pr_num == 3 and len(loaded.chunks) == 1
