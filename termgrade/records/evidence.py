"""Per-test evidence: why a test failed, in the verifier's own words.

One :class:`TestEvidence` per attested test: its outcome and duration and, for a failure,
pytest's failure message (``reprcrash``), the assertion's short repr (``longrepr``) and what
the test printed, each bounded (:data:`EVIDENCE_BOUNDS`) and secrets-masked. It comes from
the grader's signed in-container record (:mod:`termgrade.scoring.verifier.attestation`), never from
files the agent could write. Display data: the reward never reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

MAX_MESSAGE = 300
MAX_REPR = 1200
MAX_OUTPUT = 600
EVIDENCE_BOUNDS = {"message": MAX_MESSAGE, "repr": MAX_REPR, "output": MAX_OUTPUT}
"""Field -> most characters kept (the in-container plugin cuts to the same bounds)."""
MASK = "[secret masked]"
_SECRETS = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\b(?:ghp|gho|ghs|ghu|github_pat|glpat|xox[abpr]|hf|sk|sk-proj)[-_][A-Za-z0-9_-]{16,}"
    r"|(?i:(?<=password=)|(?<=passwd=)|(?<=secret=)|(?<=token=)|(?<=api_key=))[^\s'\"&]{6,}")
"""What :func:`mask_secrets` masks: private keys, cloud and forge tokens, and the value of a
``password=``/``token=``-like assignment. ``termgrade validate`` scans every published cell
with detect-secrets again."""


def mask_secrets(text: str) -> str:
    """``text`` with anything :data:`_SECRETS` matches replaced by :data:`MASK`."""
    return _SECRETS.sub(MASK, text)


class TestEvidence(BaseModel):
    """One attested test's outcome, duration and, when it failed, what the failure said."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Test node id as the verifier reports it "
                      "(``k:`` prefixed when k-th of several pytest sessions).")
    outcome: str = Field(description="passed, failed, error, skipped, xfailed, xpassed or "
                         "deselected (the attested outcome).")
    duration_s: Annotated[float, Field(ge=0)] = Field(
        0.0, description="Setup, call and teardown time, seconds.")
    message: str | None = Field(None, description="The failure message (pytest's "
                                "reprcrash), at most 300 characters; null unless it failed. "
                                "For a shortened string comparison (assert 'abc...' == "
                                "'abd...'), that line, then pytest's - and + diff lines cut "
                                "to a window around their first difference and a ? line "
                                "marking it.")
    repr: str | None = Field(None, description="The assertion's short repr (pytest's "
                             "longrepr, its last 1200 characters); null unless it failed.")
    output: str | None = Field(None, description="What the failing test printed (captured "
                               "stdout/stderr/log, last 600 characters); null when none.")


DIFF_BEFORE = 20
DIFF_AFTER = 40
"""Characters of a long string diff shown before and after its first difference."""
_FIRST_LINE = 100
_DIFF_LINE = re.compile(r"^([-+?]) (.*)$")


def _shortened(first: str) -> bool:
    """pytest's one-line ``assert 'abc...' == 'abd...'`` with both sides cut (``...``)."""
    body = first.removeprefix("AssertionError: ")
    left, eq, right = body.removeprefix("assert ").partition(" == ")
    return (body.startswith("assert ") and bool(eq) and "..." in left and "..." in right
            and left[:1] in "'\"" and right[:1] in "'\"")


def _diff_lines(text: str) -> tuple[str, str] | None:
    """The first ``-`` line and the ``+`` line after it of pytest's diff in ``text``
    (a reprcrash message, indented, or a longrepr, ``E``-prefixed); None without both."""
    lines = text.splitlines()
    marked = [line[1:] for line in lines if line.startswith("E ") or line == "E"]
    body = marked[1:] or lines  # a longrepr: its E lines after the crash line's
    block = [line for line in body if line.strip()]
    if not block:
        return None
    indent = min(len(line) - len(line.lstrip(" ")) for line in block)
    minus = plus = None
    for line in block:
        match = _DIFF_LINE.match(line[indent:]) if line[:indent].strip() == "" else None
        if match is None:
            continue
        if match.group(1) == "-" and minus is None:
            minus = match.group(2)
        elif match.group(1) == "+" and minus is not None:
            plus = match.group(2)
            break
    return (minus, plus) if minus is not None and plus is not None else None


def _first_difference(minus: str, plus: str, whole: bool) -> int | None:
    """Where the lines first differ; where the shorter ends only when both are ``whole``
    (a line cut short could otherwise look like a difference); None when unknown."""
    at = next((i for i, (a, b) in enumerate(zip(minus, plus, strict=False)) if a != b), None)
    if at is None and whole and len(minus) != len(plus):
        return min(len(minus), len(plus))
    return at


def _window(text: str, start: int) -> str:
    shown = text[start:start + DIFF_BEFORE + DIFF_AFTER]
    return ("…" if start else "") + shown + ("…" if len(text) > start + len(shown) else "")


def readable_message(message: str | None, repr_text: str | None) -> str | None:
    """A failure message that shows where two long strings differ: pytest's shortened
    ``assert 'abc...' == 'abd...'`` line, then its diff's ``-`` and ``+`` lines (from the
    message, else the longrepr) cut to a window around their first difference, and a
    ``?`` line marking it; within :data:`MAX_MESSAGE`. Any other message is unchanged.
    Display data: the reward never reads it."""
    if not message:
        return message
    first = message.splitlines()[0]
    if not _shortened(first):
        return message
    # the longrepr's whole lines (its first may be cut: it holds the last MAX_REPR
    # characters), then the message's (its last may be cut at MAX_MESSAGE)
    sources = [("\n".join((repr_text or "").splitlines()[1:]), True),
               ("\n".join(message.splitlines()[1:]), len(message) < MAX_MESSAGE)]
    found = None
    for text, whole in sources:
        pair = _diff_lines(text)
        at = _first_difference(*pair, whole) if pair is not None else None
        if pair is not None and at is not None:
            found = (*pair, at)
            break
    if found is None:
        return message
    minus, plus, at = found
    start = max(0, at - DIFF_BEFORE)
    marker = " " * (at - start + (1 if start else 0)) + "^"
    head = first if len(first) <= _FIRST_LINE else first[:_FIRST_LINE - 1] + "…"
    lines = [head, f"- {_window(minus, start)}", f"+ {_window(plus, start)}", f"? {marker}"]
    return "\n".join(lines)[:MAX_MESSAGE]


def evidence_list(outcomes: Mapping[str, str],
                  evidence: Mapping[str, Mapping[str, object]]) -> list[TestEvidence]:
    """Evidence records for every attested test, secrets masked, in outcome order."""
    out = []
    for name, outcome in outcomes.items():
        kept = evidence.get(name, {})
        texts: dict[str, str | None] = {}
        for key, bound in EVIDENCE_BOUNDS.items():
            value = kept.get(key)
            texts[key] = mask_secrets(str(value)[:bound]) if isinstance(value, str) else None
        try:
            duration = max(0.0, float(str(kept.get("duration") or 0.0)))
        except ValueError:
            duration = 0.0
        texts["message"] = readable_message(texts["message"], texts["repr"])
        out.append(TestEvidence(name=name, outcome=outcome, duration_s=duration, **texts))
    return out


def failure_lines(evidence: Iterable[TestEvidence], limit: int = 3) -> list[str]:
    """``name: message`` of the failing tests, at most ``limit``: a reason in one line each."""
    failed = [e for e in evidence if e.outcome in ("failed", "error")]
    return [f"{e.name.split('::')[-1]}: {(e.message or e.outcome).splitlines()[0][:160]}"
            for e in failed[:limit]]
