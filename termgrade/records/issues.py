"""The one issue type: what a stage found wrong, where, how bad, and how to fix it.

Audit (:class:`~termgrade.audit.agent_code.AgentCodeFinding`), validation
(:class:`~termgrade.validate.findings.ValidationFinding`) and trial reading
(:class:`~termgrade.trialsets.issues.DataIssue`) each report an :class:`Issue`: a subclass
that keeps its stage's own constructor, fields, printed line and JSON, and fills the shared
fields from them, so a reader handles every stage's issues the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How bad an issue is."""

    ERROR = "error"
    """The input is wrong: the stage fails, or refuses to go on."""
    WARNING = "warning"
    """Suspicious but usable: counted and said out loud, and the stage goes on."""


@dataclass(frozen=True, kw_only=True)
class Issue:
    """One problem a stage found."""

    check: str
    """What found it: a check name (``archive``, ``agent_code``) or an issue kind
    (``nan_reward``)."""
    where: str = ""
    """The place: a file, ``file row 3 [field]``, ``path:line``; empty for the whole input."""
    what: str
    """What is wrong (and, for a warning, what was done about it)."""
    severity: Severity = Severity.ERROR
    fix: str = ""
    """How to fix it, when the stage knows (else the message says it, or nothing does)."""

    def __str__(self) -> str:
        return ": ".join(part for part in (self.check, self.where, self.what) if part)

    def to_issue(self) -> dict[str, str]:
        """The shared fields as JSON, the same keys for every stage."""
        return {"check": self.check, "where": self.where, "what": self.what,
                "severity": self.severity.value, "fix": self.fix}
