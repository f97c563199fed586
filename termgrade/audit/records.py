"""The audit's records: one :class:`TaskAudit` per task of ours, and the whole report."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.version import RecordFormat

AUDIT_SCHEMA_VERSION = "1.0"
AUDIT_FORMAT = RecordFormat(schema="audit", version=AUDIT_SCHEMA_VERSION,
                            writer="termgrade audit --json")
TextField = Literal["instruction", "tests"]
FIELDS: tuple[TextField, ...] = ("instruction", "tests")


class NearDuplicate(BaseModel):
    """Two tasks of the corpus whose instructions (or test code) nearly coincide."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    field: TextField = Field(description="What was compared: instruction or tests.")
    task_a: str = Field(description="The task id that sorts first.")
    task_b: str = Field(description="The other task id.")
    estimated_jaccard: float = Field(description="MinHash estimate of the shingle Jaccard.")
    jaccard: float = Field(description="Exact Jaccard similarity of the two shingle sets.")

    def other(self, task_id: str) -> str:
        return self.task_b if task_id == self.task_a else self.task_a


class ContaminationMatch(BaseModel):
    """The external task closest to one of ours, for one field."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    field: TextField = Field(description="What was compared: instruction or tests.")
    external_id: str = Field(description="The closest external task's directory name.")
    external_path: str = Field(description="Where that task was read from.")
    containment: float = Field(description="Share of our n-grams found in the external task.")
    reverse_containment: float = Field(description="Share of its n-grams found in ours.")
    flagged: bool = Field(description="max(containment, reverse) >= the threshold.")

    @property
    def score(self) -> float:
        return max(self.containment, self.reverse_containment)


class TaskAudit(BaseModel):
    """Everything the audit found about one task of ours (one ``--json`` line)."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Annotated[str, AUDIT_FORMAT] = Field(AUDIT_SCHEMA_VERSION,
                                                         description="Format version.")
    task_id: str = Field(description="The task directory's name.")
    path: str = Field(description="The task directory.")
    checks: dict[str, str | None] = Field(
        description="Every static check by name: null when it passed, else the reason.")
    near_duplicates: list[NearDuplicate] = Field(
        description="Flagged pairs of the corpus that include this task.")
    contamination: list[ContaminationMatch] = Field(
        description="Per field, the closest external task (empty without --against).")

    @property
    def failed_checks(self) -> dict[str, str]:
        return {name: reason for name, reason in self.checks.items() if reason is not None}

    @property
    def contaminated(self) -> list[ContaminationMatch]:
        return [match for match in self.contamination if match.flagged]

    @property
    def passed(self) -> bool:
        from termgrade.audit.static_checks import INFORMATIONAL  # static_checks is heavier

        failing = set(self.failed_checks) - INFORMATIONAL
        return not (failing or self.near_duplicates or self.contaminated)


@dataclass(frozen=True)
class AuditSettings:
    threshold: float = 0.6
    """Near-duplicate flag: estimated Jaccard of word shingles at or above this."""
    contamination_threshold: float = 0.5
    """Contamination flag: n-gram containment (either direction) at or above this."""
    shingle_size: int = 5
    """Words per shingle for near-duplicate detection."""
    ngram: int = 8
    """Words per n-gram for contamination."""
    num_perm: int = 256
    """MinHash permutations."""
    min_tests: int = 10
    """Fewest test cases a task may have."""


@dataclass
class AuditReport:
    tasks: list[TaskAudit]
    pairs: list[NearDuplicate]
    settings: AuditSettings
    external_tasks: int = 0
    """How many external tasks the corpus was compared against."""
    external_problems: list[str] = field(default_factory=list)
    """External tasks that could not be read fully: ``path: reason``."""

    @property
    def passed(self) -> bool:
        return all(task.passed for task in self.tasks)

    def failures_by_check(self) -> Counter[str]:
        return Counter(name for task in self.tasks for name in task.failed_checks)

    def flagged_contamination(self) -> list[tuple[str, ContaminationMatch]]:
        return [(t.task_id, m) for t in self.tasks for m in t.contaminated]
