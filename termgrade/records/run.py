"""A grading run's own record: the facts a run is born with, written once when it starts.

``termgrade grade -o DIR`` appends one :class:`RunRecord` per run it starts (or resumes with
changed settings) to ``DIR/runs.jsonl``, beside ``trials.jsonl``; each trial names its run by
``job_id``. What a run planned (``k``, adaptive stopping), whom it asked (model, endpoint)
and in which scaffold are read from here, never guessed from the trials: ``labels`` takes
``k`` from it, and knows an adaptive run stopped tasks short of ``k`` by design;
``termgrade runs`` shows it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.journal import read_journal
from termgrade.records.version import RecordFormat

RUNS_FILE = "runs.jsonl"
"""The run records of an output folder, beside its ``trials.jsonl``."""
RUN_SCHEMA_VERSION = "1.0"
RUN_FORMAT = RecordFormat(schema="run", version=RUN_SCHEMA_VERSION, writer="termgrade grade")


class RunRecord(BaseModel):
    """One grading run: what it planned and whom it asked."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(description="The run's id; every trial of the run carries it.")
    run_name: str | None = Field(None, description="The name given with --run-name.")
    model: str = Field(description="The model graded (the trials' `model`).")
    endpoint: str = Field(description="The OpenAI-compatible base URL asked.")
    scaffold: str = Field(description="The scaffold's name (the trials' `scaffold`).")
    scaffold_version: str | None = Field(None, description="The scaffold's version.")
    scaffold_digest: str | None = Field(
        None, description="sha256 of the scaffold configuration (the trials' own).")
    k: int = Field(ge=1, description="Attempts planned per task (an adaptive run's k_max).")
    k_min: int = Field(ge=1, description="Attempts before a task may stop (k for fixed k).")
    adaptive: bool = Field(description="Tasks stop once their band is decided, between "
                           "k_min and k attempts; a task short of k is then by design.")
    confidence: float | None = Field(
        None, ge=0, le=1, description="The adaptive rule's confidence; null for fixed k.")
    tasks: int = Field(ge=0, description="Tasks the run set out to grade.")
    started_at: datetime = Field(description="When this record was written (UTC).")
    regrade_of: str | None = Field(
        None, description="`termgrade regrade`: the job_id of the run whose kept work this "
        "run scored again (its plan, model and scaffold are that run's). Null for a run "
        "that ran the agent.")
    termgrade_version: str = Field(description="The TermGrade that ran it.")
    schema_version: Annotated[str, RUN_FORMAT] = Field(RUN_SCHEMA_VERSION,
                                                       description="Format version.")

    def same_plan(self, other: RunRecord) -> bool:
        """Whether ``other`` says what this says (its start time and version aside)."""
        skip = {"started_at", "termgrade_version", "tasks"}
        return self.model_dump(exclude=skip) == other.model_dump(exclude=skip)


def read_runs(paths: Iterable[Path]) -> dict[str, RunRecord]:
    """The latest record of every run in the ``runs.jsonl`` files beside ``paths`` (trial
    files or folders), by ``job_id``; folders with none give none."""
    runs: dict[str, RunRecord] = {}
    seen: set[Path] = set()
    for path in paths:
        folder = path if path.is_dir() else path.parent
        file = folder / RUNS_FILE
        if file in seen or not file.is_file():
            continue
        seen.add(file)
        for record in read_journal(file, RunRecord, resume=False).records:
            runs[record.job_id] = record
    return runs
