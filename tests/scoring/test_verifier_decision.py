"""The decision rule against the reference's own record, without containers.

A skip, xfail or deselection is neutral only where the reference solution's run had the
same outcome for the same test; without a reference, only one a marker written in the
tests' source caused (or test.sh's own ``-k``). A module that skipped at import, a
collected test never reported, a session with fewer tests than the reference: 0.
The same rule through real containers and a malicious ``solve.sh``:
``tests/scoring/test_verifier_decision_attacks.py``.
"""

from __future__ import annotations

import pytest

from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.verifier.decision import decide
from termgrade.scoring.verifier.result import VerifierResult
from tests.scoring.test_verifier_attestation import CLOSE, OPEN, PASS_A, START, Event, attest, run

FINISH = {"e": "finish", "exitstatus": 0}


def report(node: str, outcome: str = "passed", *, when: str = "call", xfail: bool = False,
           skip: str | None = None) -> Event:
    event: Event = {"e": "report", "id": node, "when": when, "outcome": outcome,
                    "xfail": xfail}
    if skip is not None:
        event["skip"] = skip
    return event


def session(*events: Event, collected: int | None = None, seen: int | None = None
            ) -> list[Event]:
    reports = sum(1 for e in events if e["e"] == "report")
    head: Event = {"e": "collected", "n": reports if collected is None else collected}
    if seen is not None:
        head["seen"] = seen
    return [OPEN, START, head, *events, FINISH, CLOSE]


SKIP_S = report("t.py::test_s", "skipped", when="setup", skip="runtime")
MARKER_SKIP_S = report("t.py::test_s", "skipped", when="setup", skip="marker")
XFAIL_S = report("t.py::test_s", "skipped", skip="runtime", xfail=True)
MARKER_XFAIL_S = report("t.py::test_s", "skipped", skip="marker", xfail=True)
CONDITION_SKIP_S = report("t.py::test_s", "skipped", when="setup", skip="condition")
"""A source ``skipif`` whose condition reads a file, a program or the environment."""
CONDITION_XFAIL_S = report("t.py::test_s", "skipped", skip="condition", xfail=True)


def deselect(how: str, *ids: str) -> Event:
    return {"e": "deselected", "n": len(ids), "ids": list(ids), "how": how}


def ref(**tests: str) -> ReferenceRecord:
    names = {k.replace("__x_", "[x]").replace("__", "::").replace("_py", ".py"): v
             for k, v in tests.items()}
    return ReferenceRecord(task_digest="d" * 64, tests=names)


def score(sessions: list[list[Event]], reference: ReferenceRecord | None = None
          ) -> VerifierResult:
    return decide(VerifierResult(reward=None, raw_reward=1.0), attest(run(*sessions)),
                  reference=reference)


def test_outcomes_name_every_attested_test_as_verify_records_them() -> None:
    record = attest(run(session(PASS_A, SKIP_S, deselect("args", "t.py::test_d"), seen=3),
                        session(PASS_A, MARKER_XFAIL_S)))
    assert record.outcomes() == {"1:t.py::test_a": "passed", "1:t.py::test_s": "skipped",
                                 "1:t.py::test_d": "deselected", "2:t.py::test_a": "passed",
                                 "2:t.py::test_s": "xfailed"}
    one = attest(run(session(PASS_A, report("t.py::test_x", xfail=True))))
    assert one.outcomes() == {"t.py::test_a": "passed", "t.py::test_x": "xpassed"}
    assert score([session(PASS_A)]).outcomes == {"t.py::test_a": "passed"}


@pytest.mark.parametrize(("events", "reference", "needle"), [
    # without a reference: only the tests' own markers and test.sh's own -k are neutral
    ((PASS_A, SKIP_S), None, "skipped at run time"),
    ((PASS_A, XFAIL_S), None, "xfailed at run time"),
    ((PASS_A, deselect("runtime", "t.py::test_d")), None, "deselected at run time"),
    # with one: only the reference's own outcome for the same test
    ((PASS_A, MARKER_SKIP_S), ref(t_py__test_a="passed", t_py__test_s="passed"),
     "reference solution's run had no such outcome"),
    ((PASS_A, MARKER_XFAIL_S), ref(t_py__test_a="passed", t_py__test_s="xpassed"),
     "xfailed at run time"),
    ((PASS_A, MARKER_SKIP_S), ref(t_py__test_a="passed", t_py__test_s="xfailed"),
     "skipped at run time"),
    ((PASS_A, deselect("args", "t.py::test_d")),
     ref(t_py__test_a="passed", t_py__test_d="passed"), "ran 1 test(s), fewer than the 2"),
    ((PASS_A, deselect("args", "t.py::test_d"), report("t.py::test_e")),
     ref(t_py__test_a="passed", t_py__test_d="passed"), "deselected at run time"),
    ((PASS_A, MARKER_SKIP_S, report("t.py::test_o", "skipped", when="setup", skip="marker")),
     ref(t_py__test_a="passed", t_py__test_o="skipped"),
     "skipped at run time"),  # a skip of a test the reference never had
    ((PASS_A, report("t.py::test_p[x]")), ref(t_py__test_a="passed", t_py__test_p="passed"),
     "missing from this one, e.g. t.py::test_p"),  # a case is not the test it came from
    # without one: a source skipif whose condition can read the agent's state
    ((PASS_A, CONDITION_SKIP_S), None, "condition can read the agent's state"),
    ((PASS_A, CONDITION_XFAIL_S), None, "condition can read the agent's state"),
])
def test_what_the_rule_does_not_count_as_neutral(
        events: tuple[Event, ...], reference: ReferenceRecord | None, needle: str) -> None:
    seen = sum(1 for e in events if e["e"] == "report") + sum(
        int(str(e["n"])) for e in events if e["e"] == "deselected")
    verdict = score([session(*events, seen=seen)], reference)
    assert verdict.reward == 0.0
    assert verdict.failure and needle in verdict.failure, verdict.failure


@pytest.mark.parametrize(("events", "reference"), [
    ((PASS_A, MARKER_SKIP_S), None),                 # a platform skipif in the source
    ((PASS_A, MARKER_XFAIL_S), None),                # a non-strict xfail in the source
    ((PASS_A, deselect("args", "t.py::test_d")), None),  # test.sh's own -k
    ((PASS_A, CONDITION_SKIP_S), ref(t_py__test_a="passed", t_py__test_s="skipped")),
    ((PASS_A, SKIP_S), ref(t_py__test_a="passed", t_py__test_s="skipped")),
    ((PASS_A, XFAIL_S), ref(t_py__test_a="passed", t_py__test_s="xfailed")),
    ((PASS_A, deselect("runtime", "t.py::test_d")),
     ref(t_py__test_a="passed", t_py__test_d="deselected")),
    ((PASS_A, report("t.py::test_s")), ref(t_py__test_a="passed", t_py__test_s="skipped")),
    ((PASS_A, report("t.py::test_p[x]"), report("t.py::test_q")),
     ref(t_py__test_a="passed", t_py__test_p__x_="passed")),  # a test the reference lacked
])
def test_what_stays_a_pass(events: tuple[Event, ...], reference: ReferenceRecord | None) -> None:
    verdict = score([session(*events)], reference)
    assert (verdict.reward, verdict.failure) == (1.0, None)


def test_a_module_that_skips_at_import_is_zero_even_beside_passing_tests() -> None:
    vanished = session(PASS_A, {"e": "collect-skip", "id": "test_outputs.py"})
    for reference in (None, ref(t_py__test_a="passed")):
        verdict = score([vanished], reference)
        assert verdict.reward == 0.0 and "skipped at import" in (verdict.failure or "")
    errored = session(PASS_A, {"e": "collect-error", "id": "test_outputs.py"})
    assert "failed to collect" in (score([errored]).failure or "")


def test_a_collected_test_never_reported_is_zero() -> None:
    removed = score([session(PASS_A, seen=2)])  # a hook dropped one, no pytest_deselected
    assert removed.reward == 0.0 and "removed by a hook" in (removed.failure or "")
    silent = score([session(PASS_A, collected=2)])
    assert silent.reward == 0.0 and "collected 2" in (silent.failure or "")


def test_fewer_tests_or_sessions_than_the_reference_is_zero() -> None:
    reference = ref(t_py__test_a="passed", t_py__test_b="passed")
    assert "fewer than the 2" in (score([session(PASS_A)], reference).failure or "")
    two = ReferenceRecord(task_digest="d" * 64, tests={"1:t.py::test_a": "passed",
                                                       "2:t.py::test_a": "passed"})
    assert "2 pytest session(s)" in (score([session(PASS_A)], two).failure or "")
    assert score([session(PASS_A), session(PASS_A)], two).reward == 1.0


def test_a_reference_that_recorded_no_test_judges_as_no_reference() -> None:
    empty = ReferenceRecord(task_digest="d" * 64, tests={}, attested=False,
                            attest_reason="no pytest session")
    assert score([session(PASS_A, MARKER_SKIP_S)], empty).reward == 1.0
    assert score([session(PASS_A, SKIP_S)], empty).reward == 0.0


def test_partial_credit_earns_nothing_for_a_test_that_vanished() -> None:
    weights = {"test_a": 1.0, "test_b": 1.0}
    reference = ref(t_py__test_a="passed", t_py__test_b="passed")
    record = attest(run(session(PASS_A)))
    verdict = decide(VerifierResult(reward=None, raw_reward=1.0), record, weights, reference)
    assert verdict.reward == 0.0 and "fewer than" in (verdict.failure or "")
    skipped = attest(run(session(PASS_A, report("t.py::test_b", "skipped", when="setup",
                                                skip="runtime"))))
    verdict = decide(VerifierResult(reward=None, raw_reward=1.0), skipped, weights, reference)
    assert verdict.reward == 0.5


CASE = "t.py::test_case[{}]"
CASES_REF = ReferenceRecord(task_digest="d" * 64, tests={
    CASE.format("easy"): "passed", CASE.format("hard"): "passed"})


def test_a_parametrised_case_cannot_stand_in_for_another() -> None:
    """The agent's state swaps one case for another (the count stays 2): 0, naming the
    case that went missing; the count rule alone would pass it (the node-id check is its
    only blocker); the honest run of both cases stays 1."""
    swapped = attest(run(session(report(CASE.format("easy")), report(CASE.format("easy2")))))
    verdict = decide(VerifierResult(reward=None, raw_reward=1.0), swapped, reference=CASES_REF)
    assert verdict.reward == 0.0
    assert verdict.failure and "missing from this one" in verdict.failure \
        and CASE.format("hard") in verdict.failure, verdict.failure
    blockers = swapped.pass_blockers(reference=dict(CASES_REF.tests))
    assert len(blockers) == 1 and "missing from this one" in blockers[0], blockers
    assert swapped.pass_blockers(reference=dict(CASES_REF.tests), soft=False) == blockers
    honest = attest(run(session(report(CASE.format("easy")), report(CASE.format("hard")))))
    assert decide(VerifierResult(reward=None, raw_reward=1.0), honest,
                  reference=CASES_REF).reward == 1.0


def test_a_case_deselected_or_skipped_where_the_reference_ran_it_is_zero() -> None:
    for gone in (deselect("args", CASE.format("hard")),
                 report(CASE.format("hard"), "skipped", when="setup", skip="marker")):
        record = attest(run(session(report(CASE.format("easy")), gone, seen=2)))
        verdict = decide(VerifierResult(reward=None, raw_reward=1.0), record,
                         reference=CASES_REF)
        blockers = record.pass_blockers(reference=dict(CASES_REF.tests))
        assert verdict.reward == 0.0 and any(
            "reference solution's run had no such outcome" in b for b in blockers), blockers


def test_a_condition_skip_without_a_reference_is_its_only_blocker() -> None:
    """Were a ``condition`` skip neutral (the defence off), the run would pass."""
    blockers = attest(run(session(PASS_A, CONDITION_SKIP_S))).pass_blockers()
    assert len(blockers) == 1 and "condition can read the agent's state" in blockers[0]
    assert attest(run(session(PASS_A, MARKER_SKIP_S))).pass_blockers() == []


def stopped_session(*events: Event, collected: int, stopped: bool = True) -> list[Event]:
    """A session pytest stopped by ``-x``/``--maxfail`` (its ``shouldfail``)."""
    head: Event = {"e": "collected", "n": collected}
    return [OPEN, START, head, *events, {"e": "finish", "exitstatus": 1, "stopped": stopped},
            CLOSE]


def test_a_session_stopped_by_maxfail_after_a_failure_is_a_failing_run_not_an_incomplete_one(
        ) -> None:
    """Fairness round 10: a task whose test.sh runs ``pytest -x`` was ``error`` in verify
    (the untouched container's run "collected 3 but reported 1", an attestation failure).
    Stopped by pytest's own rule after a failure, the tests it never ran are not passed:
    0 with no failure, and partial credit counts them as 0. Without the stop (or with no
    failure in it) the unreported tests still make the record incomplete."""
    failed = report("t.py::test_a", "failed")

    def failing(events: list[Event], reference: ReferenceRecord | None = None
                ) -> VerifierResult:  # test.sh's own number: 0, as pytest exited 1
        return decide(VerifierResult(reward=None, raw_reward=0.0), attest(run(events)),
                      reference=reference)

    stopped = failing(stopped_session(failed, collected=3))
    assert stopped.reward == 0.0 and stopped.failure is None, stopped.failure
    against = ref(t_py__test_a="passed", t_py__test_b="passed", t_py__test_c="passed")
    assert failing(stopped_session(failed, collected=3), against).failure is None
    weights = {"test_a": 1.0, "test_b": 1.0, "test_c": 1.0}
    partial = decide(VerifierResult(reward=None, raw_reward=1.0),
                     attest(run(stopped_session(report("t.py::test_b"), failed,
                                                collected=3))), weights)
    assert partial.reward == pytest.approx(1 / 3)
    unstopped = failing(stopped_session(failed, collected=3, stopped=False))
    assert "collected 3" in (unstopped.failure or "")
    no_failure = failing(stopped_session(PASS_A, collected=3))  # a stop with none failed
    assert no_failure.reward == 0.0 and "collected 3" in (no_failure.failure or "")
