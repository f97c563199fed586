"""A candidate's history: every round's prompt, answer and verdict, and how it ended."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.version import RecordFormat
from termgrade.verify.record import VerifyRecord
from termgrade.verify.verdict import Verdict

CANDIDATE_SCHEMA_VERSION = "1.0"
CANDIDATE_FORMAT = RecordFormat(schema="candidate", version=CANDIDATE_SCHEMA_VERSION,
                                writer="termgrade generate")


class GenerationFailure(StrEnum):
    """How a candidate ended: a verify verdict, or one of these generation failures."""

    UNPARSABLE = "unparsable"
    """Its last answer did not follow the answer format (or named unsafe files)."""
    ENDPOINT_ERROR = "endpoint_error"
    """The model endpoint failed (infrastructure, not the candidate): rerun on resume."""


class Round(BaseModel):
    """One request to the model and what became of its answer."""

    model_config = ConfigDict(extra="forbid")
    round: int = Field(ge=0, description="0: the first answer; n: the n-th repair.")
    prompt: str = Field(description="The user message of this round (the task request or "
                                    "the failure fed back).")
    response: str | None = Field(description="The model's answer, verbatim; null when the "
                                             "endpoint failed.")
    parse_error: str | None = Field(None, description="Why the answer was unparsable.")
    endpoint_error: str | None = Field(None, description="Why the endpoint gave no answer.")
    verify: VerifyRecord | None = Field(None, description="The execution filter's record.")
    model_s: float = Field(0.0, description="Seconds waiting for the model (retries included).")
    build_s: float = Field(0.0, description="Seconds building the image offline.")
    verify_s: float = Field(0.0, description="Seconds of verify beyond the build (oracle, nop).")
    container_wait_s: float = Field(0.0, description="Seconds waiting for a container slot.")


class CandidateRecord(BaseModel):
    """One candidate task, from its request to kept or dropped (one journal line)."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Annotated[str, CANDIDATE_FORMAT] = Field(
        CANDIDATE_SCHEMA_VERSION, description="Format version.")
    candidate_id: str = Field(description="gen-<domain>-<difficulty>-<nnn>.")
    domain: str
    difficulty: str
    topic: str | None
    model: str = Field(description="The model that wrote it.")
    prompts_version: str = Field(description="The prompt templates' version folder.")
    system_prompt: str = Field(description="The system message every round carried.")
    rounds: list[Round] = Field(description="Every round, in order.")
    outcome: str = Field(description="The last round's verify verdict, or a GenerationFailure.")
    audit_findings: list[str] = Field(
        default_factory=list, description="Why the audit dropped it (verified ones only).")
    audited: bool = Field(False, description="The audit ran on it (it was verified).")

    @property
    def last(self) -> Round:
        return self.rounds[-1]

    @property
    def verified(self) -> bool:
        return self.outcome == Verdict.VERIFIED.value

    @property
    def kept(self) -> bool:
        return self.verified and self.audited and not self.audit_findings

    @property
    def drop_reason(self) -> str | None:
        if self.kept:
            return None
        if self.verified:
            return "audit: " + "; ".join(self.audit_findings) if self.audited else "not audited"
        last = self.last
        detail = (last.parse_error or last.endpoint_error
                  or (last.verify.error if last.verify else None) or "")
        return f"{self.outcome}: {detail}".rstrip(": ")

    def seconds(self, key: str) -> float:
        return float(sum(getattr(r, key) for r in self.rounds))
