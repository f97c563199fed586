"""Verdict precedence and the resume journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.verify import Journal, Verdict, VerifyRecord, classify


@pytest.mark.parametrize(("kwargs", "verdict"), [
    ({"built": False}, Verdict.BUILD_FAILED),
    ({"oracle_rewards": [1.0, None]}, Verdict.ERROR),
    ({"nop_reward": None}, Verdict.ERROR),
    ({"errored": True}, Verdict.ERROR),
    ({"oracle_rewards": []}, Verdict.ERROR),
    ({"oracle_rewards": [0.0, 0.0]}, Verdict.UNSATISFIABLE),
    ({"oracle_rewards": [0.0, 0.0], "nop_reward": 1.0}, Verdict.UNSATISFIABLE),
    ({"nop_reward": 1.0}, Verdict.VACUOUS),
    ({"all_skipped": True}, Verdict.VACUOUS),
    ({"oracle_rewards": [1.0, 0.0, 1.0]}, Verdict.FLAKY),
    ({"oracle_rewards": [1.0, 0.5]}, Verdict.FLAKY),
    ({}, Verdict.VERIFIED),
])
def test_classify(kwargs: dict[str, object], verdict: Verdict) -> None:
    base: dict[str, object] = {"built": True, "oracle_rewards": [1.0, 1.0], "nop_reward": 0.0,
                               "errored": False, "all_skipped": False}
    base.update(kwargs)
    assert classify(**base) is verdict  # type: ignore[arg-type]


def record(task_id: str, verdict: Verdict = Verdict.VERIFIED) -> VerifyRecord:
    return VerifyRecord(task_id=task_id, task_digest="d" * 64, verdict=verdict,
                        oracle_rewards=[1.0], nop_reward=0.0, n_assertions=3, tests=[],
                        tampered=[], durations={}, error=None)


def test_journal_round_trip_and_torn_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    journal.append(record("a"))
    journal.append(record("b", Verdict.FLAKY))
    journal.append(record("a", Verdict.ERROR))
    with journal.path.open("a") as handle:
        handle.write('{"task_id": "c", "verd')  # a crash mid-write
    loaded = journal.load()
    assert sorted(loaded) == ["a", "b"]
    assert loaded["a"].verdict is Verdict.ERROR
    journal.reset()
    assert journal.load() == {}


def test_record_forbids_unknown_fields() -> None:
    data = record("a").model_dump()
    data["surprise"] = 1
    with pytest.raises(ValueError):
        VerifyRecord.model_validate(data)


@pytest.mark.parametrize(("kwargs", "verdict"), [
    ({"oracle_tampered": True}, Verdict.UNSATISFIABLE),
    ({"oracle_tampered": True, "oracle_rewards": [1.0, 0.0]}, Verdict.UNSATISFIABLE),
    ({"oracle_tampered": True, "nop_reward": 1.0}, Verdict.UNSATISFIABLE),
    ({"oracle_tampered": True, "errored": True}, Verdict.ERROR),  # a crash stays an error
    ({"oracle_tampered": True, "hacked": True}, Verdict.HACKABLE),
    ({"oracle_tampered": False}, Verdict.VERIFIED),
])
def test_classify_a_reference_that_tampers(kwargs: dict[str, object], verdict: Verdict) -> None:
    base: dict[str, object] = {"built": True, "oracle_rewards": [0.0, 0.0], "nop_reward": 0.0,
                               "errored": False, "all_skipped": False}
    if kwargs.get("oracle_tampered") is False:
        base["oracle_rewards"] = [1.0, 1.0]
    base.update(kwargs)
    assert classify(**base) is verdict  # type: ignore[arg-type]


def test_a_service_not_ready_in_the_untouched_container_is_no_error() -> None:
    """Round 6 fairness: the nop run's declared service has no program yet."""
    from termgrade.verify.runner import _service_not_ready

    assert _service_not_ready("attestation: service(s) [0] never became ready")
    assert not _service_not_ready("attestation: pytest session 1 never finished")
    assert not _service_not_ready("the verifier's image and closure: service never became ready")
