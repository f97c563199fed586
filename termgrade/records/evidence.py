"""Per-test evidence: why a test failed, in the verifier's own words.

One :class:`TestEvidence` per attested test: its outcome and duration and, for a failure,
pytest's failure message (``reprcrash``), the assertion's short repr (``longrepr``) and what
the test printed, each bounded (:data:`EVIDENCE_BOUNDS`) and secrets-masked. It comes from
the grader's signed in-container record (:mod:`termgrade.scoring.attestation`), never from
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
                                "reprcrash), at most 300 characters; null unless it failed.")
    repr: str | None = Field(None, description="The assertion's short repr (pytest's "
                             "longrepr, its last 1200 characters); null unless it failed.")
    output: str | None = Field(None, description="What the failing test printed (captured "
                               "stdout/stderr/log, last 600 characters); null when none.")


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
        out.append(TestEvidence(name=name, outcome=outcome, duration_s=duration, **texts))
    return out


def failure_lines(evidence: Iterable[TestEvidence], limit: int = 3) -> list[str]:
    """``name: message`` of the failing tests, at most ``limit``: a reason in one line each."""
    failed = [e for e in evidence if e.outcome in ("failed", "error")]
    return [f"{e.name.split('::')[-1]}: {(e.message or e.outcome).splitlines()[0][:160]}"
            for e in failed[:limit]]
