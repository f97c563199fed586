"""Issue 44, item 11: an endpoint that died mid-run was reported as one that "refuses every
request" and "nothing answers after 3 tries" at once, and never said "restart it, then
rerun to resume". The trial runner is the stand-in of test_grade_runner.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.grade import TrialJob, grade_model
from termgrade.grade.errors import GradeAborted
from termgrade.grade.record import ENDPOINT_UNUSABLE
from termgrade.records.trial import TrialRecord
from tests.grade.test_grade_runner import AGENT, _records, scripted
from tests.support.task_dirs import MakeTask

URL = AGENT.endpoint.url
DIED = (f"{URL}: nothing answers after 3 tries: ConnectError: [Errno 111] Connection "
        "refused (check that the server is up and --base-url is right)")
"""The client's message for an endpoint that stopped answering (agent/client.py)."""


def _stops(message: str, tmp_path: Path) -> GradeAborted:
    def dies_after_two(job: TrialJob) -> TrialRecord:
        record = scripted(lambda _: True)(job)
        if job.attempt >= 1:
            record.exception_type = ENDPOINT_UNUSABLE
            record.exception_message = message
            record.counted = record.passed = False
            record.reward = None
        return record

    with pytest.raises(GradeAborted) as caught:
        grade_model([tmp_path / "tasks"], AGENT, tmp_path / "out", k=2, workers=1,
                    progress=False, run=dies_after_two)
    return caught.value


def test_a_dead_endpoint_says_one_thing_and_restart_then_rerun(
        make_task: MakeTask, tmp_path: Path) -> None:
    make_task("task-a")
    error = _stops(DIED, tmp_path)
    said = f"{error} {error.fix}"
    assert "stopped answering mid-run" in said and "refuses every request" not in said
    assert said.count("nothing answers") == 1 and "check that the server" not in said
    assert "restart it" in said and "rerun the same command to resume" in said
    assert len([r for r in _records(tmp_path / "out") if r.counted]) == 1  # kept


def test_an_endpoint_that_refuses_says_what_to_check_and_resume(
        make_task: MakeTask, tmp_path: Path) -> None:
    make_task("task-a")
    error = _stops("HTTP 404: model not found", tmp_path)
    assert "refuses every request: HTTP 404" in str(error)
    assert error.fix is not None and "check --model" in error.fix and "resume" in error.fix
