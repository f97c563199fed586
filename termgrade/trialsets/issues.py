"""Data issues: suspicious but usable input, counted and said out loud, never zeroed silently."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

from termgrade.core.errors import DataWarning
from termgrade.records.issues import Issue, Severity


@dataclass(frozen=True)
class DataIssue(Issue):
    """One kind of problem found in the input, with how many records it touches: an
    :class:`~termgrade.records.issues.Issue` (a warning, for the whole input) whose ``check``
    is the kind and whose ``what`` is the message."""

    kind: str
    """Short machine name: nan_reward, unscored_counted, duplicate_slot, mixed_k, ..."""
    count: int
    """How many trials (or tasks, for task-level kinds) it concerns."""
    message: str
    """What was found, what was done about it, and how to fix the input."""
    check: str = field(init=False, default="")
    what: str = field(init=False, default="")
    severity: Severity = field(default=Severity.WARNING, kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "check", self.kind)
        object.__setattr__(self, "what", self.message)

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


@dataclass
class IssueLog:
    """Collects issues and emits each as a :class:`DataWarning` when it is added."""

    issues: list[DataIssue] = field(default_factory=list)

    def add(self, kind: str, count: int, message: str) -> None:
        issue = DataIssue(kind, count, message)
        self.issues.append(issue)
        warnings.warn(str(issue), DataWarning, stacklevel=3)

    def extend(self, issues: Iterable[DataIssue]) -> None:
        self.issues.extend(issues)

    def kinds(self) -> set[str]:
        return {issue.kind for issue in self.issues}


def preview(items: Iterable[str], limit: int = 5) -> str:
    """``a, b, c (+12 more)``: a short list for messages."""
    items = list(items)
    head = ", ".join(items[:limit])
    return head + (f" (+{len(items) - limit} more)" if len(items) > limit else "")
