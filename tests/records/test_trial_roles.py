"""Each trial record field declares its roles, and the lists that split the record are
derived from them (issue 46, item 4).

The four lists were kept by hand (``SCORED`` in ``grade/regrade.py``,
``UNPUBLISHED_TRIAL_FIELDS`` and ``COPIED_TRIAL_FIELDS`` in ``builders/rows.py``,
``TRIAL_FIELDS`` in ``view/api.py``); nothing held ``SCORED`` to the model, so a new
scoring field would have been copied from the source run on regrade. Here: every field
declares its roles (a field without fails, naming it and the fix); the derived lists are
exactly the hand-kept ones as they were (written down once below); a regrade copies no
scored field from its source, and every field the scoring's outcome decides is scored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from termgrade.builders.rows import COPIED_TRIAL_FIELDS, UNPUBLISHED_TRIAL_FIELDS
from termgrade.grade import regrade
from termgrade.grade.record import graded_record
from termgrade.records.errors import RoleError
from termgrade.records.evidence import TestEvidence
from termgrade.records.roles import Role, declared_roles, fields_with, fields_without
from termgrade.records.trial import TrialRecord
from termgrade.records.verdict import Outcome, TestVerdict
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.view.api import INDEX_FIELDS, TRIAL_FIELDS

# The hand-kept lists as they were before the roles (commit dad62d7).
SCORED_BEFORE = {"reward", "passed", "counted", "tests", "n_tests_passed", "n_tests_failed",
                 "exception_type", "exception_message", "attested", "left_out",
                 "test_evidence", "failure_messages", "verifier_output", "started_at",
                 "finished_at"}
UNPUBLISHED_BEFORE = {"schema_version", "http_retries", "job_id", "episode", "run_name"}
COPIED_BEFORE = (  # in column order: the rows' key order follows it
    "trial_id", "task_id", "model", "scaffold", "attempt", "reward", "passed", "counted",
    "retry_index", "retry_of", "tests", "failure_messages", "test_evidence", "n_tests_passed",
    "n_tests_failed", "input_tokens", "output_tokens", "cached_tokens", "turns", "per_turn",
    "duration_s", "started_at", "finished_at", "agent_timed_out", "exception_type",
    "exception_message", "source", "stop_reason", "attested", "left_out", "task_digest",
    "scaffold_digest", "scaffold_config", "scaffold_version", "regraded_from", "token_turns")
SHOWN_BEFORE = {"trial_id", "task_id", "model", "scaffold", "config", "attempt", "retry_index",
                "reward", "passed", "counted", "reason", "near_miss", "n_tests_passed",
                "n_tests_failed", "failed_test", "failed_message", "turns", "input_tokens",
                "output_tokens", "duration_s", "exception_message"}

NEW_RUN = {"trial_id", "job_id", "run_name", "source", "retry_of", "retry_index",
           "regraded_from", "task_digest"}
"""What :func:`regrade.regraded` sets as the new run's identity (neither scored nor the
source's)."""


# -- (1) every field declares its roles ---------------------------------------------------

def test_every_trial_field_declares_its_roles() -> None:
    undeclared = [name for name, info in TrialRecord.model_fields.items()
                  if sum(isinstance(m, Role) for m in info.metadata) != 1]
    assert not undeclared, (
        f"TrialRecord fields without exactly one Role: {undeclared}; fix: annotate each in "
        "termgrade/records/trial.py, e.g. `name: Annotated[str, Role.ROW] = Field(...)`")
    assert list(declared_roles(TrialRecord)) == list(TrialRecord.model_fields)


class _Toy(BaseModel):
    kept: Annotated[int, Role.ROW] = Field(0)
    new_score: float = Field(0.0, description="A field added without its roles.")


def test_a_field_without_roles_is_refused_naming_it_and_the_fix() -> None:
    with pytest.raises(RoleError) as caught:
        declared_roles(_Toy)
    message = str(caught.value)
    assert "_Toy.new_score: declares no roles" in message
    assert "fix: annotate the field" in message and "Role.NONE" in message
    with pytest.raises(RoleError, match="new_score"):
        fields_with(_Toy, Role.SCORED)  # deriving a list refuses it too


def test_contradictory_or_repeated_roles_are_refused() -> None:
    class CopiedUnpublished(BaseModel):
        x: Annotated[int, Role.COPIED] = 0

    class Twice(BaseModel):
        x: Annotated[int, Role.SCORED, Role.ROW] = 0

    with pytest.raises(RoleError, match=r"CopiedUnpublished\.x: is COPIED but not PUBLISHED"):
        declared_roles(CopiedUnpublished)
    with pytest.raises(RoleError, match=r"Twice\.x: declares roles 2 times"):
        declared_roles(Twice)


def test_the_roles_stay_off_the_row_models() -> None:
    """The marker is not carried into the trajectory row models (the JSON Schemas are held
    to the models by ``termgrade schemas --check``: unchanged)."""
    from termgrade.builders.rows import EpisodeRow, SftRow

    for row in (SftRow, EpisodeRow):
        carried = [name for name, info in row.model_fields.items()
                   if any(isinstance(m, Role) for m in info.metadata)]
        assert not carried, (row.__name__, carried)


# -- (2) the derived lists are the hand-kept ones ------------------------------------------

def test_scored_is_the_hand_kept_list() -> None:
    assert set(regrade.SCORED) == SCORED_BEFORE
    assert len(regrade.SCORED) == len(SCORED_BEFORE)


def test_unpublished_is_the_hand_kept_list() -> None:
    assert frozenset(UNPUBLISHED_BEFORE) == UNPUBLISHED_TRIAL_FIELDS
    assert set(fields_without(TrialRecord, Role.PUBLISHED)) == UNPUBLISHED_BEFORE


def test_copied_is_the_hand_kept_list_in_its_order() -> None:
    assert COPIED_TRIAL_FIELDS == COPIED_BEFORE
    assert set(fields_with(TrialRecord, Role.COPIED)) == set(COPIED_BEFORE)


def test_the_viewer_shows_the_hand_kept_columns() -> None:
    assert set(TRIAL_FIELDS) == SHOWN_BEFORE and len(TRIAL_FIELDS) == len(SHOWN_BEFORE)
    assert set(fields_with(TrialRecord, Role.SHOWN)) == SHOWN_BEFORE - set(INDEX_FIELDS)
    assert not set(INDEX_FIELDS) & set(TrialRecord.model_fields)


# -- (3) a regrade copies no scored field from its source ---------------------------------

OLD = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)


def _source() -> TrialRecord:
    """A source trial whose every scored field holds a value the new scoring below (an
    unscored outcome) cannot give."""
    return TrialRecord(
        trial_id="job-old-t-m-0-0", task_id="t", model="m", scaffold="bash-tool", attempt=0,
        reward=1.0, passed=True, counted=True,
        tests=[TestVerdict(name="test_source", outcome=Outcome.PASSED)],
        n_tests_passed=99, n_tests_failed=98, input_tokens=1234, turns=7, duration_s=42.0,
        started_at=OLD, finished_at=OLD, exception_type="SourceError",
        exception_message="SOURCE", source="termgrade", job_id="job-old", attested=False,
        left_out="SOURCE left out",
        test_evidence=[TestEvidence(name="test_source", outcome="passed", duration_s=1.0)],
        failure_messages=["test_source: SOURCE"], verifier_output="SOURCE output",
        task_digest="old-digest", scaffold_digest="scaffold-digest")


def _regraded(source: TrialRecord) -> TrialRecord:
    outcome = RunOutcome("m", None, error="engine failed: SOURCE never says this")
    return regrade.regraded(source, outcome, job_id="job-new", run_name="again",
                            started_at=datetime.now(UTC), task_digest="new-digest")


def _copied_scored(new: TrialRecord, source: TrialRecord) -> set[str]:
    """The scored fields the regraded trial holds as its source had them."""
    return {name for name in fields_with(TrialRecord, Role.SCORED)
            if getattr(new, name) == getattr(source, name)}


def test_the_source_differs_from_the_new_scoring_in_every_scored_field() -> None:
    """Else the next test proves nothing for that field."""
    source = _source()
    fresh = graded_record(task_id="t", model="m", attempt=0, retry_index=0,
                          outcome=RunOutcome("m", None, error="boom"),
                          started_at=datetime.now(UTC), finished_at=datetime.now(UTC))
    same = {name for name in fields_with(TrialRecord, Role.SCORED)
            if getattr(fresh, name) == getattr(source, name)}
    assert not same, f"give _source() values the new scoring cannot give for {sorted(same)}"


def test_a_regrade_copies_no_scored_field_from_its_source() -> None:
    source = _source()
    new = _regraded(source)
    assert not _copied_scored(new, source)
    assert (new.reward, new.counted, new.tests, new.verifier_output) == (None, False, [], None)
    agent_side = set(TrialRecord.model_fields) - set(regrade.SCORED) - NEW_RUN
    assert {n for n in agent_side if getattr(new, n) != getattr(source, n)} == set()
    assert new.regraded_from == source.trial_id and new.task_digest == "new-digest"


def test_a_hand_kept_scored_list_that_misses_a_field_copies_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack the roles defend against: a scored field left out of the list is the
    source run's on regrade, and the check above sees it."""
    source = _source()
    monkeypatch.setattr(regrade, "SCORED", tuple(n for n in regrade.SCORED if n != "attested"))
    assert _copied_scored(_regraded(source), source) == {"attested"}


def test_every_field_the_scoring_decides_is_scored() -> None:
    """Two outcomes apart in everything a verifier run decides: each record field that
    differs is SCORED, or deliberately the source's (duration_s: the trial's wall time,
    agent included). A new field graded_record fills from the outcome without the role
    fails here."""
    now = datetime.now(UTC)

    def record(outcome: RunOutcome) -> TrialRecord:
        return graded_record(task_id="t", model="m", attempt=0, retry_index=0,
                             outcome=outcome, started_at=now, finished_at=now)

    lost = record(RunOutcome("m", None, error="engine failed", attested=False))
    scored = record(RunOutcome(
        "m", VerifierResult(reward=0.0, tests=[TestVerdict(name="test_a", outcome=Outcome.FAILED)],
                            output="verifier said", attested=True,
                            outcomes={"test_a": "failed"},
                            evidence={"test_a": {"message": "assert 1 == 2"}}),
        left_out="2 entries: /tmp/x", attested=True, durations={"total": 3.0}))
    differ = {n for n in TrialRecord.model_fields if getattr(lost, n) != getattr(scored, n)}
    assert differ - set(regrade.SCORED) == {"duration_s"}
    assert {"reward", "counted", "tests", "test_evidence", "failure_messages",
            "verifier_output", "left_out", "exception_type", "attested"} <= differ
