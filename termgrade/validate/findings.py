"""What ``termgrade validate`` found: one :class:`ValidationFinding` per problem, precisely."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from termgrade.records.issues import Issue


@dataclass(frozen=True)
class ValidationFinding(Issue):
    """One validation problem: an :class:`~termgrade.records.issues.Issue` (an error) whose
    ``where`` is the file, row and field, and whose ``what`` is the message."""

    check: str
    """card, files, rows, budget, load, archive, registry or secrets."""
    file: str
    """Path relative to the repo root."""
    message: str
    row: int | None = None
    """0-based row index within the file, when one row is at fault."""
    field: str | None = None
    """Dotted field path within the row (``files.3.sha256``), when one field is."""
    where: str = dataclasses.field(init=False, default="")
    what: str = dataclasses.field(init=False, default="")

    def __post_init__(self) -> None:
        where = self.file
        if self.row is not None:
            where += f" row {self.row}"
        if self.field:
            where += f" [{self.field}]"
        object.__setattr__(self, "where", where)
        object.__setattr__(self, "what", self.message)

    def __str__(self) -> str:
        return f"{self.check}: {self.where}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        """The finding as ``termgrade validate --json`` writes it (and as it is rebuilt from
        a worker's answer: ``ValidationFinding(**finding.to_dict())``)."""
        return {"check": self.check, "file": self.file, "row": self.row, "field": self.field,
                "message": self.message}


@dataclass
class ValidationReport:
    root: str
    findings: list[ValidationFinding] = field(default_factory=list)
    passed: dict[str, str] = field(default_factory=dict)
    """Check name -> what it proved (only for checks with no findings)."""
    notes: list[str] = field(default_factory=list)
    """Things a reader should know that are not failures (e.g. filtered false positives)."""

    @property
    def ok(self) -> bool:
        return not self.findings

    def add(self, finding: ValidationFinding) -> None:
        self.findings.append(finding)

    def record(self, check: str, proved: str, before: int) -> None:
        """Mark ``check`` passed with ``proved`` when it added no finding since ``before``."""
        if len(self.findings) == before:
            self.passed[check] = proved

    def merge(self, other: ValidationReport) -> None:
        """Append what ``other`` (a check run on its own report) found, proved and noted."""
        self.findings.extend(other.findings)
        self.passed.update(other.passed)
        self.notes.extend(other.notes)

    def to_dict(self) -> dict[str, object]:
        return {
            "root": self.root,
            "ok": self.ok,
            "findings": [finding.to_dict() for finding in self.findings],
            "passed": self.passed,
            "notes": self.notes,
        }
