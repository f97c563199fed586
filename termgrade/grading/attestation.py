"""The trusted side of a test run: per-test results signed inside pytest, checked here.

The plugin (:mod:`termgrade.grading.incontainer.termgrade_attest`) numbers and signs
every event with a one-time key; the host keeps the lines in arrival order from the
container's append-only channel. A line with a bad signature, a repeated or missing
number, or an alarm (agent code loaded into the pytest process) makes the run untrusted.
A pass needs a complete record: started, every test reported, finished, at least one
test passed and none failed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from importlib import resources

from termgrade.grading.reports import Outcome, TestVerdict
from termgrade.sandbox.channel import ChannelLines

PREFIX = b"TERMGRADE-ATTEST"
PLUGIN_MODULE = "termgrade_attest"


def plugin_source() -> bytes:
    """The plugin's source, from the installed package."""
    return (resources.files("termgrade.grading.incontainer") / f"{PLUGIN_MODULE}.py").read_bytes()


def new_key() -> bytes:
    return secrets.token_bytes(32)


def end_marker() -> bytes:
    """A fresh marker the grader writes to the channel after test.sh has exited."""
    return b"TERMGRADE-END " + secrets.token_hex(16).encode()


@dataclass
class Attestation:
    started: bool = False
    finished: bool = False
    exitstatus: int | None = None
    collected: int | None = None
    collect_errors: list[str] = field(default_factory=list)
    reports: dict[str, list[tuple[str, str, bool]]] = field(default_factory=dict)
    """nodeid -> [(when, outcome, xfail)] in order."""
    alarms: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why the record cannot be trusted (forged, missing or reordered lines)."""
    services_down: list[int] = field(default_factory=list)

    def verdicts(self) -> list[TestVerdict]:
        out = []
        for nodeid, phases in self.reports.items():
            outcome = Outcome.PASSED
            if any(o == "failed" for w, o, _ in phases if w != "call"):
                outcome = Outcome.ERROR
            elif any(o == "failed" for w, o, _ in phases):
                outcome = Outcome.FAILED
            elif any(o == "skipped" for _, o, _ in phases):
                outcome = Outcome.SKIPPED
            elif not any(w == "call" for w, _, _ in phases):
                outcome = Outcome.ERROR
            out.append(TestVerdict(nodeid, outcome))
        return out

    def pass_blockers(self) -> list[str]:
        """Why this record does not show a passing test run (empty when it does)."""
        reasons = list(self.problems)
        reasons += [f"agent code ran inside the verifier's pytest process ({a})"
                    for a in self.alarms]
        if not self.started:
            reasons.append("no attested pytest session started (the verifier must run pytest, "
                           "which loads the termgrade_attest plugin)")
            return reasons
        if not self.finished:
            reasons.append("the attested pytest session never finished")
        if self.collect_errors:
            reasons.append(f"{len(self.collect_errors)} test file(s) failed to collect")
        verdicts = self.verdicts()
        bad = [v.name for v in verdicts if v.outcome in (Outcome.FAILED, Outcome.ERROR)]
        if bad:
            reasons.append(f"{len(bad)} attested test(s) failed, e.g. {bad[0]}")
        if not any(v.outcome is Outcome.PASSED for v in verdicts):
            reasons.append("no attested test passed")
        if self.exitstatus not in (None, 0):
            reasons.append(f"pytest exited {self.exitstatus}")
        if self.collected is not None and self.collected != len(self.reports):
            reasons.append(f"pytest collected {self.collected} test(s) but reported "
                           f"{len(self.reports)}")
        if self.services_down:
            reasons.append(f"service(s) {self.services_down} never became ready")
        return reasons

    def trust_blockers(self) -> list[str]:
        """Why no reward above 0 can be trusted: forged lines or agent code in pytest."""
        return list(self.problems) + [f"agent code ran inside the verifier's pytest process "
                                      f"({a})" for a in self.alarms]


def read_attestation(channel: ChannelLines, key: bytes) -> Attestation:
    """Check every line's signature and number; collect the events."""
    att = Attestation()
    expected = 0
    for raw in channel.lines:
        parts = raw.split(b" ", 3)
        if len(parts) != 4 or parts[0] != PREFIX:
            att.problems.append("a malformed attestation line")
            continue
        _, seq_text, mac, payload = parts
        good = hmac.new(key, seq_text + b" " + payload, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(good, mac):
            att.problems.append("an attestation line not signed by the grader's plugin")
            continue
        seq = int(seq_text)
        if seq != expected:
            att.problems.append(f"attestation line {seq} arrived where {expected} was due")
            expected = max(expected, seq + 1)
            continue
        expected += 1
        try:
            event = json.loads(payload)
        except ValueError:
            att.problems.append("an attestation line that is not JSON")
            continue
        _apply(att, event)
    if channel.dropped:
        att.problems.append(f"{channel.dropped} attestation line(s) dropped (over size)")
    if not channel.ended:
        att.problems.append("the attestation channel did not close in time")
    return att


def _apply(att: Attestation, event: dict[str, object]) -> None:
    kind = event.get("e")
    if kind == "start":
        att.started = True
    elif kind == "alarm":
        att.alarms.append(f"{event.get('how')}: {event.get('path')}")
    elif kind == "collect-error":
        att.collect_errors.append(str(event.get("id")))
    elif kind == "collected":
        att.collected = int(str(event.get("n")))
    elif kind == "report":
        phase = (str(event.get("when")), str(event.get("outcome")), bool(event.get("xfail")))
        att.reports.setdefault(str(event.get("id")), []).append(phase)
    elif kind == "service" and not event.get("ready"):
        att.services_down.append(int(str(event.get("n"))))
    elif kind == "finish":
        att.finished = True
        att.exitstatus = int(str(event.get("exitstatus")))
