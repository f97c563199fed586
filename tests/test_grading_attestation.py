"""The trusted side of a test run: signed lines, their order, and what a pass needs."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from termgrade.grading.attestation import PREFIX, Attestation, new_key, read_attestation
from termgrade.grading.verifier import VerifierResult, decide
from termgrade.sandbox.channel import ChannelLines, LineChannel

KEY = new_key()


def line(seq: int, event: dict[str, object], key: bytes = KEY) -> bytes:
    payload = json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
    mac = hmac.new(key, str(seq).encode() + b" " + payload, hashlib.sha256).hexdigest()
    return PREFIX + f" {seq} {mac} ".encode() + payload


def run(*events: dict[str, object]) -> list[bytes]:
    return [line(i, e) for i, e in enumerate(events)]


START = {"e": "start", "pid": 7}
PASS_A = {"e": "report", "id": "t.py::test_a", "when": "call", "outcome": "passed"}
FAIL_B = {"e": "report", "id": "t.py::test_b", "when": "call", "outcome": "failed"}
FINISH = {"e": "finish", "exitstatus": 0}


def attest(lines: list[bytes], *, ended: bool = True) -> Attestation:
    return read_attestation(ChannelLines(lines=lines, ended=ended), KEY)


def test_a_complete_passing_run_backs_a_pass() -> None:
    record = attest(run(START, {"e": "collected", "n": 1}, PASS_A, FINISH))
    assert record.pass_blockers() == [] and record.trust_blockers() == []


@pytest.mark.parametrize(("lines", "needle"), [
    (run(START, PASS_A, FAIL_B, {"e": "finish", "exitstatus": 1}), "failed"),
    (run(START, {"e": "collected", "n": 0}, FINISH), "no attested test passed"),
    (run(START, PASS_A), "never finished"),
    ([], "no attested pytest session started"),
    (run(START, {"e": "collected", "n": 3}, PASS_A, FINISH), "collected 3"),
    (run(START, {"e": "collect-error", "id": "t.py"}, PASS_A, FINISH), "failed to collect"),
    (run(START, {"e": "report", "id": "t.py::a", "when": "setup", "outcome": "failed"}, FINISH),
     "failed"),
])
def test_what_is_not_a_pass(lines: list[bytes], needle: str) -> None:
    assert any(needle in reason for reason in attest(lines).pass_blockers())


def test_forged_replayed_and_missing_lines_make_the_record_untrusted() -> None:
    forged = [*run(START), line(1, PASS_A, key=b"guessed"), line(1, FINISH)]
    assert any("not signed" in p for p in attest(forged).trust_blockers())
    good = run(START, FAIL_B, FINISH)
    replayed = [good[0], good[1], good[1], good[2]]
    assert any("arrived where" in p for p in attest(replayed).trust_blockers())
    dropped_failure = [good[0], good[2]]  # a line deleted from the stream
    assert any("arrived where" in p for p in attest(dropped_failure).trust_blockers())
    assert any("did not close" in p for p in attest(good, ended=False).trust_blockers())


def test_an_alarm_cannot_be_outweighed() -> None:
    record = attest(run(START, {"e": "alarm", "how": "import", "path": "/app/x.py"},
                        PASS_A, FINISH))
    assert any("agent code ran inside" in r for r in record.trust_blockers())


def result(raw: float | None) -> VerifierResult:
    return VerifierResult(reward=None, raw_reward=raw)


def test_decide_keeps_test_sh_number_only_where_the_record_backs_it() -> None:
    passing = attest(run(START, PASS_A, FINISH))
    failing = attest(run(START, PASS_A, FAIL_B, {"e": "finish", "exitstatus": 1}))
    assert decide(result(1.0), passing).reward == 1.0
    assert decide(result(0.0), failing).reward == 0.0
    assert decide(result(0.5), failing).reward == 0.5  # partial credit needs a finished run
    forged = decide(result(1.0), failing)
    assert forged.reward == 0.0 and forged.failure and "attestation" in forged.failure
    assert decide(result(1.0), attest([])).reward == 0.0
    tampered = result(1.0)
    tampered.tampered = ["A /usr/local/bin/bash: added outside"]
    assert decide(tampered, passing).reward == 0.0
    assert decide(result(None), passing).reward == 0.0


def test_channel_keeps_prefixed_lines_across_chunks_and_drops_overlong() -> None:
    chunks = [b"noise\nTERMGRADE-ATTEST 0 ab", b"c {}\n", b"TERMGRADE-ATTEST " + b"x" * 20000,
              b"\nTERMGRADE-ATTEST 1 de {}\nEND-1\nTERMGRADE-ATTEST 2 late {}\n"]
    got = LineChannel(iter(chunks), prefix=PREFIX, end_marker=b"END-1").close(wait_s=2)
    assert got.lines == [b"TERMGRADE-ATTEST 0 abc {}", b"TERMGRADE-ATTEST 1 de {}"]
    assert got.dropped == 1 and got.ended
