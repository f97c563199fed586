"""The verify record: one per task, printed by ``termgrade verify --json`` and journaled."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.evidence import TestEvidence
from termgrade.records.verdict import TestVerdict
from termgrade.records.version import RecordFormat
from termgrade.scoring.reference import ReferenceRecord
from termgrade.verify.verdict import Verdict

VERIFY_SCHEMA_VERSION = "1.0"
VERIFY_FORMAT = RecordFormat(schema="verify_record", version=VERIFY_SCHEMA_VERSION,
                             writer="termgrade verify --json")

class VerifyRecord(BaseModel):
    """Execution-filtering result of one task."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Annotated[str, VERIFY_FORMAT] = Field(VERIFY_SCHEMA_VERSION,
                                                          description="Format version.")
    task_id: str = Field(description="The task directory's name.")
    task_digest: str = Field(description="sha256 of the task's files; a changed task reruns.")
    verdict: Verdict = Field(description="One of the eight verdicts.")
    oracle_rewards: list[float | None] = Field(
        description="Reward of each reference-solution run; null when unscored.")
    nop_reward: float | None = Field(description="Reward of the untouched container.")
    n_assertions: int = Field(ge=0, description="Tests in the last oracle run's report.")
    tests: list[TestVerdict] = Field(
        description="Per-test verdicts of the last oracle run (of the nop run when the task "
                    "has no reference solution).")
    tampered: list[str] = Field(description="Tamper findings over all runs (empty: clean).")
    durations: dict[str, float] = Field(
        description="Seconds: build, and per run kind oracle_total/oracle_agent/... sums.")
    error: str | None = Field(description="What went wrong, naming the file and the fix.")
    attacks_played: int = Field(0, ge=0, description="Attacks of the battery played (--attacks).")
    wants_internet: bool = Field(
        False, description="task.toml asks for the network ([environment] allow_internet = "
                           "true); verify ran it offline all the same.")
    reference: ReferenceRecord | None = Field(
        None,
        description="The last clean passing reference-solution run: per attested test node "
                    "id its outcome (what the decision rule judges an agent's skips "
                    "against), the paths it changed (the transfer set's footprint) and "
                    "whether the task is attestable; null when no reference run passed.")
    hacked_by: list[str] = Field(
        default_factory=list,
        description="Attacks that earned a reward above 0 (or left the run unscored), "
                    "with the reward.")
    # Issue 34: why the verdict, in the verifier's own words (grouped, additive).
    reason: str | None = Field(
        None, description="Why the verdict, in one line: the reference tests that failed "
        "with their messages (unsatisfiable), the tests the untouched container passed "
        "(vacuous), the failing build step with its command, exit status and first error "
        "line (build_failed). Null when verified or not recorded.")
    test_evidence: list[TestEvidence] = Field(
        default_factory=list, description="The last reference run's (else the untouched "
        "container's) per-test evidence: outcome, duration and, for a failure, its message, "
        "short repr and printed output (bounded, secrets masked).")
