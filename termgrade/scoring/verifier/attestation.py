"""The trusted side of a test run: events signed inside the scoring container, checked here.

Two in-container programs sign what they see, each line numbered, under keys derived
from the run's one-time master key: the broker (stream 0: the sessions it granted or
refused, the services, the end of ``test.sh``) and the plugin in every pytest session
``test.sh`` started (stream ``n`` for session ``n``: what it loaded, every test report).
The host keeps the lines in arrival order from the container's append-only channel. A
line with a bad signature, a repeated or missing number, a session that opened but never
closed, or an alarm (agent code in a pytest process) makes the run untrusted. A pass
needs every session that ran tests to be complete and green (see
:meth:`Attestation.pass_blockers`, the decision rule).

The decision rule against the reference's own record: a skip, xfail or deselection is
neutral only where the reference solution's run had the same outcome for the same test
(:class:`~termgrade.scoring.reference.ReferenceRecord` ``tests``, keyed as
:meth:`Attestation.outcomes` names them); without a reference, only a skip or xfail that a
marker written in the tests' source caused whose condition (if any) the platform alone
decides (literals, ``sys``, ``platform``, ``os.name``), or a deselection by test.sh's own
``-k``, ``-m`` or ``--deselect``. A module that skipped or failed at import, a collected test
never reported, a session with fewer tests than the reference's, and a test of the
reference's run (by node id) missing from the trial's are never a pass.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable

from termgrade.records.verdict import Outcome, TestVerdict
from termgrade.sandbox.channel import ChannelLines
from termgrade.scoring.incontainer import signed_line
from termgrade.scoring.incontainer.signed_line import derive, line_mac

PREFIX = signed_line.PREFIX.encode()
PLUGIN_STEM = "termgrade_attest"
BROKER_MODULE = "termgrade_broker"
WATCH_MODULE = "termgrade_watch"
"""What the broker watches (``/tests``, verify-time installs): beside it, imported by it."""
_NUMBERED = re.compile(r"^(\d+):")
"""A reference name of the k-th of several sessions (``2:tests/t.py::test_a``)."""


def plugin_source() -> bytes:
    """The plugin's source, from the installed package."""
    return _source(PLUGIN_STEM)


def broker_source() -> bytes:
    return _source(BROKER_MODULE)


def watch_source() -> bytes:
    return _source(WATCH_MODULE)


def sitecustomize_source() -> bytes:
    return _source("sitecustomize")


STAGED_INLINE = re.compile(
    rb"^from ([A-Za-z_]\w*) import (?:\([^)\n]*#[^\n]*\bstaged inline\b[^\n]*\n[^)]*\)"
    rb"|[^(\n]*#[^\n]*\bstaged inline\b[^\n]*)$", re.MULTILINE)
"""An import of an in-container file that staging replaces with the named sibling's text:
``from signed_line import Signer  # type: ignore[import-not-found]  # staged inline``, or
the parenthesized form with the comment after ``(``."""
FUTURE = b"from __future__ import annotations\n"


def _source(stem: str) -> bytes:
    """An in-container file as staged (:func:`_assemble` of the installed package's)."""
    return _assemble(resources.files("termgrade.scoring.incontainer"), stem)


def _assemble(here: Traversable, stem: str) -> bytes:
    """``here/stem.py`` as one file: each sibling it imports ``# staged inline`` written in
    place of that import (B holds no module of that name to import, and the plugin must
    import nothing by a name the agent could predict).

    Recursive (a sibling's own staged-inline imports are filled the same way), each sibling
    at most once per staged file (a later import of it is dropped: its names are defined
    above), a sibling's ``from __future__ import annotations`` dropped: the staged file's own
    must then be there (or the sibling's annotations would be evaluated, which Python 3.8
    cannot do), else ValueError. FileNotFoundError names a sibling that is not in ``here``."""
    text = (here / f"{stem}.py").read_bytes()
    return _inline(here, stem, text, {stem}, future=FUTURE in text)


def _inline(here: Traversable, stem: str, text: bytes, done: set[str], *,
            future: bool) -> bytes:
    """``text`` (of ``stem``) with its staged-inline imports filled; ``done``: the siblings
    written already (updated)."""

    def fill(match: re.Match[bytes]) -> bytes:
        name = match.group(1).decode()
        if name in done:
            return f"# {name}.py: staged inline above".encode()
        sibling = here / f"{name}.py"
        if not sibling.is_file():
            raise FileNotFoundError(
                f"{stem}.py imports {name} '# staged inline', but there is no {name}.py "
                f"beside it ({here}) to write in its place")
        done.add(name)
        body = sibling.read_bytes()
        if FUTURE in body and not future:
            raise ValueError(f"{name}.py, staged inline, has 'from __future__ import "
                             f"annotations' and the file it is staged into does not")
        body = _inline(here, name, body.replace(FUTURE, b"", 1), done, future=future)
        return f"# {name}.py, staged inline:\n".encode() + body.rstrip(b"\n") + \
            f"\n# end of {name}.py".encode()

    return STAGED_INLINE.sub(fill, text)


def plugin_module() -> str:
    """A per-trial module name for the plugin: no file the agent left can be named so."""
    return f"{PLUGIN_STEM}_{secrets.token_hex(8)}"


def new_key() -> bytes:
    return secrets.token_bytes(32)


def end_marker(master: bytes) -> bytes:
    """The line the broker writes once test.sh has exited: derived, never shown anywhere."""
    return b"TERMGRADE-END " + derive(master, "end").hex()[:32].encode()


@dataclass
class Session:
    """One pytest process the broker granted a key."""

    number: int
    opened: bool = False
    closed: bool = False
    started: bool = False
    collect_only: bool = False
    finished: bool = False
    died: bool = False
    """The broker saw its process end without the plugin's last word (a signal killed it,
    ``_exit``, ``exec``): whatever lines were written for it, it never exited normally."""
    exitstatus: int | None = None
    stopped: bool = False
    """pytest stopped the session early by its own rule (``-x``, ``--maxfail``: its
    ``shouldfail`` once that many tests failed; ``--sw``'s ``shouldstop``): the tests it
    did not run are not passed."""
    collected: int | None = None
    deselected: int = 0
    deselected_ids: dict[str, str] = field(default_factory=dict)
    """nodeid -> ``args`` (test.sh's -k/-m/--deselect) or ``runtime`` (a hook's)."""
    seen: int | None = None
    """Items pytest collected before any hook removed or deselected one."""
    collect_errors: list[str] = field(default_factory=list)
    collect_skips: list[str] = field(default_factory=list)
    """Test modules that skipped themselves at import."""
    reports: dict[str, list[tuple[str, str, bool, str]]] = field(default_factory=dict)
    """nodeid -> [(when, outcome, xfail, skip kind)] in order."""
    evidence: dict[str, dict[str, object]] = field(default_factory=dict)
    """nodeid -> display evidence (``duration``, ``message``, ``repr``, ``output``); never
    read by the decision, bounded by :func:`_keep_evidence`."""

    @property
    def ran_tests(self) -> bool:
        return self.started and not self.collect_only

    def verdicts(self) -> list[TestVerdict]:
        out = []
        for nodeid, phases in self.reports.items():
            outcome = Outcome.PASSED
            if any(o == "failed" for w, o, _, _ in phases if w != "call"):
                outcome = Outcome.ERROR
            elif any(o == "failed" for _, o, _, _ in phases):
                outcome = Outcome.FAILED
            elif any(o == "skipped" for _, o, _, _ in phases):
                outcome = Outcome.SKIPPED
            elif not any(w == "call" for w, _, _, _ in phases):
                outcome = Outcome.ERROR
            out.append(TestVerdict(nodeid, outcome))
        return out

    def outcomes(self) -> dict[str, str]:
        """nodeid -> passed, failed, error, skipped, xfailed, xpassed or deselected."""
        out = {}
        for nodeid, phases in self.reports.items():
            if any(o == "failed" for w, o, _, _ in phases if w != "call"):
                out[nodeid] = "error"
            elif any(o == "failed" for _, o, _, _ in phases):
                out[nodeid] = "failed"
            elif any(o == "skipped" for _, o, _, _ in phases):
                out[nodeid] = "xfailed" if any(x for _, o, x, _ in phases
                                               if o == "skipped") else "skipped"
            elif not any(w == "call" for w, _, _, _ in phases):
                out[nodeid] = "error"
            else:
                out[nodeid] = "xpassed" if any(x for _, _, x, _ in phases) else "passed"
        for nodeid in self.deselected_ids:
            out.setdefault(nodeid, "deselected")
        return out

    def neutral(self, nodeid: str, outcome: str, reference: dict[str, str] | None) -> bool:
        """May this skip, xfail or deselection stand without costing the pass?

        With the reference's record (names as this session's): only where the reference
        had the same outcome for the same test. Without one: a skip or xfail that a marker
        written in the tests' source caused whose condition (if any) the platform alone
        decides (kind ``marker``; a ``skipif`` that reads a file, runs a program or looks
        at the environment is kind ``condition``), a deselection by test.sh's own options."""
        if reference is not None:
            return reference.get(nodeid) == outcome
        if outcome == "deselected":
            return self.deselected_ids.get(nodeid) == "args"
        return all(kind == "marker" for _, o, x, kind in self.reports.get(nodeid, [])
                   if o == "skipped" or x)

    def _why_not_neutral(self, nodeid: str, reference: dict[str, str] | None) -> str:
        if reference is not None:
            return "the reference solution's run had no such outcome for it"
        if any(kind == "condition" for _, _, _, kind in self.reports.get(nodeid, [])):
            return "a marker whose condition can read the agent's state, not only the platform"
        return "the agent's state decides such a skip"

    def _stopped_on_failure(self) -> bool:
        return self.stopped and any(o in ("failed", "error") for o in self.outcomes().values())

    def blockers(self, *, soft: bool = True, reference: dict[str, str] | None = None
                 ) -> list[str]:
        """Why this session does not show a passing run (empty when it does).

        ``reference``: the reference run's outcomes of this session's tests (see
        :meth:`neutral`), None without a reference. ``soft=False`` leaves out what partial
        credit tolerates (tests that failed, or were skipped or deselected without the
        reference's doing so, and the exit status they cause)."""
        tag = f"pytest session {self.number}"
        if not self.closed:
            return [f"{tag} never exited normally (killed, stopped or timed out)"]
        if self.died:
            return [f"{tag}: the broker saw its process end without exiting normally "
                    "(killed by a signal, _exit or exec), whatever its lines say"]
        if not self.started:
            return []  # --version, --help: nothing was run
        if not self.finished:
            return [f"{tag} never finished"]
        if self.collect_only:
            return []
        reasons: list[str] = []
        later: list[str] = []
        # stopped by -x/--maxfail after a test failed: the tests it never ran are not
        # passed, a failing run like any other (partial credit counts them as 0), not an
        # incomplete record
        short = reasons if not self._stopped_on_failure() else later
        if self.collect_errors:
            reasons.append(f"{tag}: {len(self.collect_errors)} test file(s) failed to collect")
        if self.collect_skips:
            reasons.append(f"{tag}: {len(self.collect_skips)} test module(s) skipped at import "
                           f"(every test in them vanished), e.g. {self.collect_skips[0]}")
        if self.collected is not None and self.collected != len(self.reports):
            short.append(f"{tag}: pytest collected {self.collected} test(s) but reported "
                         f"{len(self.reports)}")
        dropped = (self.seen or 0) - self.deselected - (self.collected or 0)
        if self.seen is not None and self.collected is not None and dropped > 0:
            reasons.append(f"{tag}: {dropped} collected test(s) were removed by a hook and "
                           "never reported")
        if reference is not None:
            expected = [n for n, o in reference.items() if o != "deselected"]
            if len(self.reports) < len(expected):
                short.append(f"{tag}: ran {len(self.reports)} test(s), fewer than the "
                             f"{len(expected)} the reference solution's run did")
            present = self.outcomes()
            missing = [n for n in expected if n not in present]
            if missing:  # by node id: one parametrised case cannot stand in for another
                short.append(f"{tag}: {len(missing)} test(s) of the reference solution's "
                             f"run missing from this one, e.g. {missing[0]}")
        if not soft:
            return reasons
        reasons += later
        outcomes = self.outcomes()
        bad = [n for n, o in outcomes.items() if o in ("failed", "error")]
        if bad:
            reasons.append(f"{tag}: {len(bad)} attested test(s) failed, e.g. {bad[0]}")
        for kind, label in (("skipped", "skipped at run time"), ("xfailed", "xfailed at run time"),
                            ("deselected", "deselected at run time")):
            odd = [n for n, o in outcomes.items()
                   if o == kind and not self.neutral(n, o, reference)]
            if odd:
                reasons.append(f"{tag}: {len(odd)} test(s) {label} "
                               f"({self._why_not_neutral(odd[0], reference)}), e.g. {odd[0]}")
        if self.exitstatus not in (None, 0):
            reasons.append(f"{tag}: pytest exited {self.exitstatus}")
        return reasons


@dataclass
class Attestation:
    sessions: dict[int, Session] = field(default_factory=dict)
    broker: bool = False
    ended: bool = False
    """The broker's signed end event: test.sh exited and every line before it is here."""
    alarms: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Why the record cannot be trusted (forged, missing or reordered lines)."""
    services_down: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """pytest processes the broker gave no key (started by agent code, or nested)."""
    gone: list[tuple[str, int]] = field(default_factory=list)
    """Names the broker saw appear in a watched directory and go by the end, with their
    ``st_mode`` (``incontainer/watch_names.py``)."""
    written: set[str] = field(default_factory=set)
    """Entries of a watched directory that were there when watched and were written,
    deleted, moved aside or renamed over; named files written, moved or deleted, or that
    could not be watched."""

    @property
    def started(self) -> bool:
        return any(s.ran_tests for s in self.sessions.values())

    @property
    def finished(self) -> bool:
        ran = [s for s in self.sessions.values() if s.ran_tests]
        return bool(ran) and all(s.finished for s in ran)

    def verdicts(self) -> list[TestVerdict]:
        """Every attested test of every session that ran tests, in order."""
        many = sum(1 for s in self.sessions.values() if s.ran_tests) > 1
        out = []
        for number in sorted(self.sessions):
            session = self.sessions[number]
            if session.ran_tests:
                out += [TestVerdict(f"{number}:{v.name}" if many else v.name, v.outcome)
                        for v in session.verdicts()]
        return out

    def _ran(self) -> list[tuple[str, Session]]:
        """(name prefix, session) of each session that ran tests: ``k:`` for the k-th of
        several, nothing for a single one (the names of :meth:`outcomes`)."""
        ran = [self.sessions[n] for n in sorted(self.sessions) if self.sessions[n].ran_tests]
        return [(f"{k}:" if len(ran) > 1 else "", s) for k, s in enumerate(ran, start=1)]

    def outcomes(self) -> dict[str, str]:
        """Every attested test's outcome (see :meth:`Session.outcomes`), by node id, each
        prefixed ``k:`` when ``k``-th of several sessions: what ``verify`` records of the
        reference solution's run."""
        return {prefix + node: outcome for prefix, session in self._ran()
                for node, outcome in session.outcomes().items()}

    def evidence(self) -> dict[str, dict[str, object]]:
        """Every attested test's display evidence (duration; for a failure its message,
        short repr and printed output, bounded), keyed as :meth:`outcomes`."""
        return {prefix + node: kept for prefix, session in self._ran()
                for node, kept in session.evidence.items()}

    def pass_blockers(self, *, soft: bool = True,
                      reference: dict[str, str] | None = None) -> list[str]:
        """Why this record does not show a passing test run (empty when it does).

        ``soft=False``: only what also denies partial credit (see :meth:`Session.blockers`).
        ``reference``: the reference solution's :meth:`outcomes` (None: no reference).
        """
        reasons = self.trust_blockers()
        if not self.started:
            refused = (f"; the broker refused a key to `{self.refused[0][:300]}` (a key goes "
                       "to the task's own pytest: `python -m pytest`, the closure's `pytest`, "
                       "or a runner script in /tests)") if self.refused else ""
            reasons.append("no attested pytest session ran the tests (the verifier must run "
                           f"pytest from test.sh, which loads TermGrade's plugin){refused}")
            return reasons
        ran = self._ran()
        for number in sorted(self.sessions):
            session = self.sessions[number]
            prefix = next((p for p, s in ran if s is session), None)
            mine = None if reference is None or prefix is None else {
                name[len(prefix):]: outcome for name, outcome in reference.items()
                if name.startswith(prefix) and (prefix or not _NUMBERED.match(name))}
            reasons += session.blockers(soft=soft, reference=mine)
        if reference is not None:
            sessions = {n.split(":", 1)[0] if _NUMBERED.match(n) else "" for n in reference}
            if len(sessions) > len(ran):
                reasons.append(f"the reference solution's run had {len(sessions)} pytest "
                               f"session(s) that ran tests, this one {len(ran)}")
        if soft and not any(v.outcome is Outcome.PASSED for v in self.verdicts()):
            reasons.append("no attested test passed")
        if self.services_down:
            reasons.append(f"service(s) {self.services_down} never became ready")
        return reasons

    def trust_blockers(self) -> list[str]:
        """Why no reward above 0 can be trusted: forged lines or agent code in pytest."""
        return list(self.problems) + [f"agent code ran inside the verifier's pytest process "
                                      f"({a})" for a in self.alarms]


def read_attestation(channel: ChannelLines, master: bytes) -> Attestation:
    """Check every line's signature and number; collect the events."""
    att = Attestation()
    expected: dict[int, int] = {}
    keys: dict[int, bytes] = {}
    for raw in channel.lines:
        parts = raw.split(b" ", 3)
        if len(parts) != 4 or parts[0] != PREFIX or parts[1].count(b".") != 1:
            att.problems.append("a malformed attestation line")
            continue
        _, tag, mac, payload = parts
        stream_text, seq_text = tag.split(b".")
        if not (stream_text.isdigit() and seq_text.isdigit()) or len(stream_text) > 6:
            att.problems.append("a malformed attestation line")
            continue
        stream, seq = int(stream_text), int(seq_text)
        key = keys.setdefault(stream, derive(master, f"session {stream}"))
        good = line_mac(key, tag, payload)
        if not hmac.compare_digest(good, mac):
            att.problems.append("an attestation line not signed by the grader's plugin")
            continue
        due = expected.get(stream, 0)
        if seq != due:
            att.problems.append(f"attestation line {stream}.{seq} arrived where "
                                f"{stream}.{due} was due")
            expected[stream] = max(due, seq + 1)
            continue
        expected[stream] = due + 1
        try:
            event = json.loads(payload)
        except ValueError:
            att.problems.append("an attestation line that is not JSON")
            continue
        if stream == 0:
            _apply_broker(att, event)
        elif stream not in att.sessions:
            att.problems.append(f"lines of pytest session {stream}, which the broker never "
                                "granted")
        else:
            _apply(att, att.sessions[stream], event)
    if channel.dropped:
        att.problems.append(f"{channel.dropped} attestation line(s) dropped (over size)")
    if not channel.ended or not att.ended:
        att.problems.append("the attestation channel did not close in time (the broker "
                            "never saw test.sh end)")
    return att


def _apply_broker(att: Attestation, event: dict[str, object]) -> None:
    kind = event.get("e")
    if kind == "broker":
        att.broker = True
    elif kind == "session":
        number = int(str(event.get("n")))
        att.sessions[number] = Session(number)
    elif kind == "refused":
        att.refused.append(f"{event.get('argv')}: {event.get('why')}")
    elif kind == "alarm":  # a process the broker checked maps a file the agent wrote
        att.alarms.append(f"{event.get('how')}: {event.get('path')} (pid {event.get('pid')})")
    elif kind == "died":  # a keyed session's process ended otherwise than by exiting
        died = att.sessions.get(int(str(event.get("n"))))
        if died is not None:
            died.died = True
    elif kind == "service" and not event.get("ready"):
        att.services_down.append(int(str(event.get("n"))))
    elif kind == "gone":
        att.gone.append((str(event.get("path")), int(str(event.get("mode") or 0))))
    elif kind == "written":
        att.written.add(str(event.get("path")))
    elif kind == "end":
        att.ended = True


def _apply(att: Attestation, session: Session, event: dict[str, object]) -> None:
    kind = event.get("e")
    if kind == "open":
        session.opened = True
    elif kind == "close":
        session.closed = True
    elif kind == "start":
        session.started = True
        session.collect_only = bool(event.get("collect_only"))
    elif kind == "alarm":
        att.alarms.append(f"{event.get('how')}: {event.get('path')}")
    elif kind == "collect-error":
        session.collect_errors.append(str(event.get("id")))
    elif kind == "collected":
        session.collected = int(str(event.get("n")))
        if event.get("seen") is not None:
            session.seen = int(str(event.get("seen")))
    elif kind == "collect-skip":
        session.collect_skips.append(str(event.get("id")))
    elif kind == "deselected":
        session.deselected += int(str(event.get("n")))
        ids = event.get("ids")
        for nodeid in ids if isinstance(ids, list) else []:
            session.deselected_ids[str(nodeid)] = str(event.get("how") or "runtime")
    elif kind == "report":
        phase = (str(event.get("when")), str(event.get("outcome")), bool(event.get("xfail")),
                 str(event.get("skip") or ""))
        session.reports.setdefault(str(event.get("id")), []).append(phase)
        _keep_evidence(session, str(event.get("id")), event)
    elif kind == "finish":
        session.finished = True
        session.exitstatus = int(str(event.get("exitstatus")))
        session.stopped = bool(event.get("stopped"))


EVIDENCE_BOUNDS = {"msg": ("message", 300), "repr": ("repr", 1200), "out": ("output", 600)}
"""Plugin key -> (evidence key, most characters kept): the host's bound, whatever was sent."""


def _keep_evidence(session: Session, nodeid: str, event: dict[str, object]) -> None:
    """Sum each test's phase durations; keep the first failing phase's message, repr and
    output, each cut to its bound. Display data: the reward never reads it."""
    kept = session.evidence.setdefault(nodeid, {"duration": 0.0})
    with contextlib.suppress(ValueError):
        kept["duration"] = round(float(str(kept["duration"])) + max(
            0.0, min(float(str(event.get("dur") or 0.0)), 86400.0)), 4)
    if "message" in kept or event.get("outcome") != "failed":
        return
    for key, (name, bound) in EVIDENCE_BOUNDS.items():
        value = event.get(key)
        if isinstance(value, str) and value:
            kept[name] = value[:bound]
