"""The trusted side of a test run: signed lines, their order, and the decision rule."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from termgrade.sandbox.channel import ChannelLines, LineChannel
from termgrade.scoring.verifier.attestation import (
    PREFIX,
    Attestation,
    derive,
    end_marker,
    new_key,
    read_attestation,
)
from termgrade.scoring.verifier.decision import credit, decide
from termgrade.scoring.verifier.result import VerifierResult

MASTER = new_key()
Event = dict[str, object]


def line(stream: int, seq: int, event: Event, master: bytes = MASTER) -> bytes:
    payload = json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
    tag = f"{stream}.{seq}".encode()
    key = derive(master, f"session {stream}")
    mac = hmac.new(key, tag + b" " + payload, hashlib.sha256).hexdigest()
    return PREFIX + b" " + tag + f" {mac} ".encode() + payload


def run(*sessions: list[Event], broker: tuple[Event, ...] = (), end: bool = True) -> list[bytes]:
    """The lines of a run: the broker grants each session, then their events, then the end."""
    head = [{"e": "broker", "pid": 3}, *broker,
            *({"e": "session", "n": n + 1, "pid": 10 + n} for n in range(len(sessions)))]
    lines = [line(0, i, e) for i, e in enumerate(head)]
    for number, events in enumerate(sessions, start=1):
        lines += [line(number, i, e) for i, e in enumerate(events)]
    if end:
        lines.append(line(0, len(head), {"e": "end"}))
    return lines


OPEN, CLOSE = {"e": "open", "pid": 10}, {"e": "close"}
START = {"e": "start", "collect_only": False}
PASS_A = {"e": "report", "id": "t.py::test_a", "when": "call", "outcome": "passed"}
FAIL_B = {"e": "report", "id": "t.py::test_b", "when": "call", "outcome": "failed"}
FINISH = {"e": "finish", "exitstatus": 0}
GREEN = [OPEN, START, {"e": "collected", "n": 1}, PASS_A, FINISH, CLOSE]
RED = [OPEN, START, PASS_A, FAIL_B, {"e": "finish", "exitstatus": 1}, CLOSE]


def skipped(kind: str, *, xfail: bool = False) -> Event:
    return {"e": "report", "id": "t.py::test_s", "when": "setup", "outcome": "skipped",
            "xfail": xfail, "skip": kind}


def attest(lines: list[bytes], *, ended: bool = True) -> Attestation:
    return read_attestation(ChannelLines(lines=lines, ended=ended), MASTER)


def test_a_complete_passing_run_backs_a_pass() -> None:
    record = attest(run(GREEN))
    assert record.pass_blockers() == [] and record.trust_blockers() == []


@pytest.mark.parametrize(("sessions", "needle"), [
    ([RED], "failed"),
    ([[OPEN, START, {"e": "collected", "n": 0}, FINISH, CLOSE]], "no attested test passed"),
    ([[OPEN, START, PASS_A]], "never exited normally"),
    ([[OPEN, START, PASS_A, CLOSE]], "never finished"),
    ([], "no attested pytest session ran the tests"),
    ([[OPEN, START, {"e": "collected", "n": 3}, PASS_A, FINISH, CLOSE]], "collected 3"),
    ([[OPEN, START, {"e": "collect-error", "id": "t.py"}, PASS_A, FINISH, CLOSE]],
     "failed to collect"),
    ([[OPEN, START, {"e": "report", "id": "t.py::a", "when": "setup", "outcome": "failed"},
       FINISH, CLOSE]], "failed"),
    ([GREEN, RED], "session 2: 1 attested test(s) failed"),
    ([[OPEN, START, PASS_A, skipped("empty"), FINISH, CLOSE]], "skipped at run time"),
    ([[OPEN, START, PASS_A, skipped("runtime"), FINISH, CLOSE]], "skipped at run time"),
    ([[OPEN, START, PASS_A, skipped("runtime", xfail=True), FINISH, CLOSE]],
     "xfailed at run time"),
    ([[OPEN, CLOSE]], "no attested pytest session ran the tests"),
    ([[OPEN, {"e": "start", "collect_only": True}, FINISH, CLOSE]],
     "no attested pytest session ran the tests"),
])
def test_what_is_not_a_pass(sessions: list[list[Event]], needle: str) -> None:
    blockers = attest(run(*sessions)).pass_blockers()
    assert any(needle in reason for reason in blockers), blockers


@pytest.mark.parametrize("sessions", [
    [[OPEN, CLOSE], GREEN],                              # pytest --version, then the run
    [[OPEN, {"e": "start", "collect_only": True}, FINISH, CLOSE], GREEN],  # --collect-only
    [GREEN, GREEN],                                      # two sessions
    [[OPEN, START, PASS_A, skipped("marker"), FINISH, CLOSE]],  # a platform skipif
    [[OPEN, START, PASS_A, skipped("marker", xfail=True), FINISH, CLOSE]],  # a non-strict xfail
])
def test_honest_session_shapes_pass(sessions: list[list[Event]]) -> None:
    assert attest(run(*sessions)).pass_blockers() == []


def test_forged_replayed_and_missing_lines_make_the_record_untrusted() -> None:
    good = run(RED)
    forged = [*good[:3], line(1, 2, FINISH, master=b"guessed"), *good[3:]]
    assert any("not signed" in p for p in attest(forged).trust_blockers())
    replayed = [*good[:5], good[4], *good[5:]]
    assert any("arrived where" in p for p in attest(replayed).trust_blockers())
    dropped_failure = [line for line in good if b"test_b" not in line]
    assert any("arrived where" in p for p in attest(dropped_failure).trust_blockers())
    assert any("did not close" in p for p in attest(good, ended=False).trust_blockers())
    assert any("did not close" in p for p in attest(run(GREEN, end=False)).trust_blockers())
    ungranted = [*run(GREEN)[:-1], line(2, 0, OPEN), run(GREEN)[-1]]
    assert any("never granted" in p for p in attest(ungranted).trust_blockers())


def test_an_alarm_cannot_be_outweighed() -> None:
    record = attest(run([OPEN, {"e": "alarm", "how": "import", "path": "/app/x.py"},
                         *GREEN[1:]]))
    assert any("agent code ran inside" in r for r in record.trust_blockers())


def test_a_service_that_never_became_ready_blocks_a_pass() -> None:
    record = attest(run(GREEN, broker=({"e": "service", "n": 0, "ready": False},)))
    assert any("never became ready" in r for r in record.pass_blockers())


def test_the_end_marker_is_derived_from_the_key() -> None:
    assert end_marker(MASTER) == end_marker(MASTER) != end_marker(new_key())
    assert MASTER.hex().encode() not in end_marker(MASTER)


def result(raw: float | None) -> VerifierResult:
    return VerifierResult(reward=None, raw_reward=raw)


def test_the_reward_comes_from_the_record_and_test_sh_can_only_lower_it() -> None:
    passing = attest(run(GREEN))
    failing = attest(run(RED))
    assert decide(result(1.0), passing).reward == 1.0
    assert decide(result(0.0), passing).reward == 0.0
    assert decide(result(0.5), passing).reward == 0.5
    assert decide(result(0.9999999999999999), failing).reward == 0.0
    assert decide(result(7.0), passing).reward == 1.0  # a number above 1 raises nothing
    forged = decide(result(1.0), failing)
    assert forged.reward == 0.0 and forged.failure and "attestation" in forged.failure
    assert decide(result(1.0), attest([])).reward == 0.0
    tampered = result(1.0)
    tampered.tampered = ["A /usr/local/bin/bash: shadows"]
    assert decide(tampered, passing).reward == 0.0
    assert decide(result(None), passing).reward == 0.0


def test_partial_credit_comes_from_attested_tests_and_declared_weights() -> None:
    failing = attest(run(RED))
    assert credit(failing, {"test_a": 3, "test_b": 1})[0] == 0.75
    assert credit(failing, None)[0] == 0.0
    assert decide(result(1.0), failing, {"test_a": 3, "test_b": 1}).reward == 0.75
    assert decide(result(0.5), failing, {"test_a": 3, "test_b": 1}).reward == 0.5
    unfinished = attest(run([OPEN, START, PASS_A, CLOSE]))
    assert credit(unfinished, {"test_a": 1})[0] == 0.0  # an incomplete record earns nothing
    alarmed = attest(run([OPEN, {"e": "alarm", "how": "import", "path": "/app/x"}, *RED[1:]]))
    assert decide(result(1.0), alarmed, {"test_a": 1}).reward == 0.0


def test_channel_keeps_prefixed_lines_across_chunks_and_drops_overlong() -> None:
    chunks = [b"noise\nTERMGRADE-ATTEST 0 ab", b"c {}\n", b"TERMGRADE-ATTEST " + b"x" * 20000,
              b"\nTERMGRADE-ATTEST 1 de {}\nEND-1\nTERMGRADE-ATTEST 2 late {}\n"]
    got = LineChannel(iter(chunks), prefix=PREFIX, end_marker=b"END-1").close(wait_s=2)
    assert got.lines == [b"TERMGRADE-ATTEST 0 abc {}", b"TERMGRADE-ATTEST 1 de {}"]
    assert got.dropped == 1 and got.ended
