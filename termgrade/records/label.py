"""labels.jsonl rows and split flags."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.version import RecordFormat

LABEL_SCHEMA_VERSION = "1.0"
LABEL_FORMAT = RecordFormat(schema="label", version=LABEL_SCHEMA_VERSION,
                            writer="termgrade labels")
SPLIT_FORMAT = RecordFormat(schema="split", version=LABEL_SCHEMA_VERSION,
                            writer="termgrade select")


class LabelRow(BaseModel):
    """Pass rate of one task under one model and scaffold."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The task's id.")
    model: str = Field(description="Model name.")
    scaffold: str = Field(description="Agent scaffold.")
    pass_rate: float | None = Field(
        ge=0, le=1, description="n_passed / n_counted; null if 0 counted.")
    band: str | None = Field(description="Difficulty band of pass_rate; null if unmeasured.")
    n_counted: int = Field(ge=0, description="Trials that count (infrastructure errors excluded).")
    k: int = Field(ge=0, description="Attempts planned per task for this model (the grading k).")
    n_passed: int = Field(ge=0, description="Counted trials that passed.")
    split: str | None = Field(None, description="The task's split, where the labels were "
                              "packaged with split flags (build environments --splits); "
                              "null from `termgrade labels`.")
    task_digest: str | None = Field(
        None, description="sha256 of the task's files its trials graded (one digest: "
        "`termgrade labels` refuses to mix versions of a task unless --mix-digests); null "
        "when the trials recorded none or mixed them.")
    scaffold_digest: str | None = Field(
        None, description="sha256 of the scaffold configuration of its trials; null when "
        "unrecorded or mixed.")
    attested: bool | None = Field(
        None, description="The task is attestable: every trial of it was graded from the "
        "grader's signed record. False when any trial of the task was graded unattested "
        "(test.sh's own reward; `termgrade labels` leaves such tasks out unless "
        "--include-unattested); null when its trials did not record it (Harbor ingests).")
    schema_version: Annotated[str, LABEL_FORMAT] = Field(LABEL_SCHEMA_VERSION,
                                                         description="Format version.")


class SplitRow(BaseModel):
    """The split flag of one task of the pool."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The task's id.")
    split: str = Field(description="unseen, train151 or heldout120 by default (configurable).")
    role: Literal["train", "validation"] | None = Field(
        None, description="What selection chose the task for, whatever its split is named: "
        "train, validation, or null (unseen). Builders read it; files written before it "
        "existed fall back to the default split names.")
    pass_rate: float | None = Field(ge=0, le=1, description="Base pass rate used to select it.")
    source: str | None = Field(
        None, description="Task set it comes from: 'corpus', or an external set's name.")
    schema_version: Annotated[str, SPLIT_FORMAT] = Field(LABEL_SCHEMA_VERSION,
                                                         description="Format version.")
