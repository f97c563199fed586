"""Row models of every config the builders write: one source for the parquet schemas
(:mod:`termgrade.records.arrow`), the JSON Schemas in schemas/ and the card's field tables.

The trajectories rows are derived from the trial record (:class:`TrialRecord`): their
nested columns *are* the record's nested models (:class:`ChatMessage`,
:class:`TurnMetrics`, :class:`TestVerdict`), and every column the record already has takes
the record's field (type, constraints, description) in its row shape (:func:`row_shape`).
So a new trial field is written once, in :mod:`termgrade.records.trial`: it becomes an
``episodes`` column (at the end) unless its roles (:mod:`termgrade.records.roles`) leave out
``PUBLISHED`` (:data:`UNPUBLISHED_TRIAL_FIELDS`), and
:func:`termgrade.builders.trajectory_rows.trajectory_row` copies it when they say ``COPIED``
(:data:`COPIED_TRIAL_FIELDS`; otherwise it derives the column).

Timestamps are ISO 8601 strings; ``archive`` is bytes (base64 in JSON Schema checks). A row
model with files of its own names its schema (``row_schema``: schemas/<name>.schema.json,
and the parquet metadata of its files).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, create_model

from termgrade.records.arrow import Int32, LargeStr, arrow_schema, optional_inner
from termgrade.records.roles import Role, declared_roles, fields_without
from termgrade.records.trial import ChatMessage, TrialRecord, TurnMetrics
from termgrade.records.verdict import TestVerdict


class RowModel(BaseModel):
    """The base of every dataset row: no unknown keys, bytes as base64 in JSON."""

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    row_schema: ClassVar[str | None] = None
    """The schema name of this row's files (None for nested rows)."""


# -- environments: config "tasks" ---------------------------------------------------------

class FileRow(RowModel):
    path: str = Field(description="POSIX path relative to the task directory.")
    size: int = Field(ge=0, description="Size in bytes.")
    sha256: str = Field(description="sha256 of the content, hex.")
    mode: Int32 = Field(ge=0, description="Permission bits (e.g. 493 = 0o755); the Hub drops them.")


class TaskRow(RowModel):
    """One executable task: its text, config, verification and exact archive."""

    row_schema: ClassVar[str | None] = "env_task_row"

    task_id: str = Field(description="The task's id (its directory name).")
    instruction: LargeStr = Field(description="instruction.md: what the agent is asked to do.")
    domain: str | None = Field(description="task.toml [metadata] domain (or category).")
    difficulty: str | None = Field(description="task.toml [metadata] difficulty, as authored.")
    tags: list[str] = Field(description="task.toml [metadata] tags.")
    metadata_json: LargeStr = Field(description="task.toml [metadata] as a JSON object.")
    task_toml: LargeStr = Field(description="task.toml, verbatim.")
    oracle_verified: bool = Field(
        description="The reference solution passed every verify run and an untouched "
                    "container failed (verdict == verified). Verify a task before trusting it.")
    verdict: str | None = Field(
        description="termgrade verify verdict (verified, unsatisfiable, flaky, vacuous, "
                    "build_failed, error, hackable, no_solution); null when the task was not "
                    "verified.")
    n_assertions: Int32 | None = Field(description="Named tests in the last oracle run; null "
                                                   "when not verified.")
    split: str = Field(description="unseen, or the training or validation split selection "
                                   "put the task in, under the names it gave them.")
    has_solution: bool = Field(
        description="solution/solve.sh ships. False where a corpus keeps its solutions "
                    "private: the task can be graded but never oracle-verified.")
    allow_internet: bool = Field(
        description="task.toml asks for the network ([environment] allow_internet = true). "
                    "TermGrade never gives it: grade such a task offline only knowingly "
                    "(termgrade grade --internet-tasks offline).")
    base_images: list[str] = Field(
        description="The images environment/Dockerfile starts FROM; any but TermGrade's "
                    "base image must be on the machine (or pullable) for the task to build.")
    task_digest: str = Field(description="sha256 over files, modes and contents "
                                         "(termgrade verify's task_digest).")
    files: list[FileRow] = Field(description="Manifest of every file in the archive.")
    archive: bytes = Field(description="The task directory as a deterministic .tar.gz "
                                       "(sorted PAX tar, uid/gid 0, mtime 0, modes kept).")
    archive_sha256: str = Field(description="sha256 of archive, hex.")
    reference_json: LargeStr | None = Field(
        None, description="The reference solution's recorded run as JSON (verify's "
        "footprint, per-test outcomes and attestability: what an agent's trial of this task "
        "is graded against; `materialize` writes it beside the task); null when not "
        "verified.")


# -- bandcentral: config "tasks" ----------------------------------------------------------

class BandcentralTaskRow(TaskRow):
    """A selected train or validation task with the base model's measured pass rate."""

    row_schema: ClassVar[str | None] = "bandcentral_task_row"

    base_model: str | None = Field(description="Model whose pass rate selected the task.")
    base_scaffold: str | None = Field(description="Scaffold that model was graded in.")
    base_pass_rate: float | None = Field(ge=0, le=1, description="Measured base pass rate.")
    band: str | None = Field(description="Difficulty band of base_pass_rate.")
    n_counted: Int32 | None = Field(ge=0, description="Counted trials behind base_pass_rate.")
    k: Int32 | None = Field(ge=0, description="Attempts planned per task for the base model.")


# -- trajectories -------------------------------------------------------------------------

class TextSpan(RowModel):
    """Where a step's text is in the trial's ``sft`` messages: it is
    ``messages[message_index]["content"][start:end]`` (character offsets)."""

    message_index: Int32 = Field(ge=0, description="Index of the message in the sft row's "
                                                   "messages.")
    start: int = Field(ge=0, description="First character of the text in its content.")
    end: int = Field(ge=0, description="One past its last character.")


class StepRow(RowModel):
    index: Int32 = Field(ge=0, description="0-based step index.")
    source: str = Field(description="agent, user or system.")
    message: LargeStr | None = Field(description="The model's message (analysis/plan) or the "
                                     "prompt; null when message_span locates it in the sft "
                                     "messages.")
    message_span: TextSpan | None = Field(description="Where message is in the sft row's "
                                          "messages, when it is there verbatim.")
    keystrokes: list[LargeStr] = Field(description="Keystrokes sent to the terminal, in order.")
    observation: LargeStr | None = Field(description="The terminal frame the agent saw after "
                                         "the step; null when observation_span locates it.")
    observation_span: TextSpan | None = Field(description="Where observation is in the sft "
                                              "row's messages, when it is there verbatim.")
    is_valid_tool_call: bool | None = Field(description="False when no valid call parsed.")
    input_tokens: int | None = Field(description="Prompt tokens of the step.")
    output_tokens: int | None = Field(description="Completion tokens of the step.")
    cached_tokens: int | None = Field(description="Cached prompt tokens of the step.")
    timestamp: str | None = Field(description="ISO 8601 time of the step.")


def row_shape(annotation: Any) -> Any:
    """A record field's type as a row column: a ``datetime`` becomes its ISO 8601 text
    (the record's JSON form, which the builders copy); anything else is kept."""
    inner, nullable = optional_inner(annotation)
    if inner is datetime:
        return str | None if nullable else str
    return annotation


@dataclass(frozen=True)
class FromTrial:
    """A row column that is a trial record field: its type (:func:`row_shape`),
    constraints and description are the record's unless given here. Whether the row holds
    the record's value as is or :func:`~termgrade.builders.trajectory_rows.trajectory_row`
    derives it is the field's role (``Role.COPIED``), declared on the record."""

    name: str
    annotation: Any = None
    description: str | None = None


Column = FromTrial | tuple[str, Any, str]
"""A trial-derived column, or a row's own ``(name, annotation, description)``."""


def _field(column: Column) -> tuple[str, tuple[Any, Any]]:
    if isinstance(column, tuple):
        name, annotation, description = column
        return name, (annotation, Field(description=description))
    info = TrialRecord.model_fields[column.name]
    annotation = (column.annotation if column.annotation is not None
                  else row_shape(info.annotation))
    metadata = [m for m in info.metadata if not isinstance(m, Role)]
    if metadata:
        annotation = Annotated[(annotation, *metadata)]
    return column.name, (annotation, Field(description=column.description
                                           or info.description))


def trial_row_model(name: str, doc: str, row_schema: str,
                    columns: list[Column]) -> type[BaseModel]:
    """A row model with ``columns`` in order (every column required, nullable or not)."""
    fields: dict[str, Any] = dict(_field(c) for c in columns)
    model = create_model(name, __base__=RowModel, __doc__=doc, __module__=__name__, **fields)
    model.row_schema = row_schema
    return model


SFT_COLUMNS: list[Column] = [
    FromTrial("trial_id"),
    FromTrial("task_id"),
    FromTrial("model"),
    FromTrial("scaffold"),
    FromTrial("attempt", Int32),
    FromTrial("reward"),
    FromTrial("passed"),
    FromTrial("counted", description="False for infrastructure errors and retries past k."),
    FromTrial("retry_index", Int32),
    ("split", str | None, "The task's split (--splits at build time: unseen, or the train / "
                          "validation split selection named); null when the build had no "
                          "split flags."),
    ("pass_rate", float | None, "Pass rate of the task under this trial's model and scaffold "
                                "(--labels); null when unlabelled."),
    ("band", str | None, "Difficulty band of pass_rate; null when unlabelled."),
    FromTrial("model_provider",
              description="Provider prefix of the model name (org/model), or Harbor's "
                          "provider."),
    FromTrial("messages_source", str, description=(
        "How messages were obtained. Exact: chat (the scaffold's own log, as sent and "
        "received), episodes (prompt/response files), atif (Harbor trajectory), recorded "
        "(given, source unstated). Rebuilt: atif-rebuilt (assistant turns re-serialized from "
        "the trajectory), episode-rebuilt (derived from the episode steps). none: no "
        "messages (an infrastructure error, a synthetic trial).")),
    FromTrial("messages", list[ChatMessage],
              description="SFT-ready chat messages."),
    ("tools", LargeStr | None,
     "The tool schemas (OpenAI form, a JSON list) the trial's scaffold offered the model, "
     "exactly as sent: what a chat template needs beside messages (TRL's SFTTrainer reads "
     "this column, JSON text included). Null for a scaffold whose turns are text "
     "(terminus-2) and one not registered here (oracle, nop, a Harbor agent)."),
]

_HARBOR_COLUMNS: list[Column] = [
    ("date", str | None, "Harbor: ISO start time."),
    ("episode", str, "Harbor: last episode, 'episode-<n>'."),
    ("run_id", str, "Harbor: job id (the record's job_id; its source when it has none)."),
    ("result", str | None, "Harbor: reward as text, or the exception name."),
    ("tool_definitions", LargeStr | None, "Harbor: tool definitions as JSON."),
    ("instruction", LargeStr, "Harbor: the task's instruction."),
    FromTrial("verifier_output",
              description="Harbor: verifier stdout, if kept."),
    ("trace_source", Literal["main"], "Harbor: 'main' (no subagents)."),
]

UNPUBLISHED_TRIAL_FIELDS = frozenset(fields_without(TrialRecord, Role.PUBLISHED))
"""Trial fields no row holds as such, those declared without ``Role.PUBLISHED``
(``episode`` is ``steps``; ``job_id`` is ``run_id``; ``run_name`` is the user's label of
that run)."""

_EPISODE_HEAD: list[Column] = [
    FromTrial("trial_id", description="Unique id of the trial: the key of its sft row."),
    FromTrial("retry_of"),
    FromTrial("tests", list[TestVerdict], description="Named per-test verdicts."),
    ("failed_tests", list[str], "Names of the tests that failed or errored."),
    FromTrial("failure_messages"),
    FromTrial("test_evidence"),
    FromTrial("n_tests_passed"),
    FromTrial("n_tests_failed"),
    FromTrial("input_tokens"),
    FromTrial("output_tokens"),
    FromTrial("cached_tokens"),
    FromTrial("turns"),
    FromTrial("per_turn", list[TurnMetrics], description="Per-turn token and time metrics."),
    FromTrial("duration_s"),
    FromTrial("started_at", description="ISO 8601 start time."),
    FromTrial("finished_at", description="ISO 8601 end time."),
    FromTrial("agent_timed_out"),
    FromTrial("exception_type"),
    FromTrial("exception_message"),
    FromTrial("source"),
    ("steps", list[StepRow], "Every step: message, keystrokes, terminal frame."),
]


def _placed(*groups: list[Column]) -> set[str]:
    return {c.name for group in groups for c in group if isinstance(c, FromTrial)}


EPISODE_COLUMNS: list[Column] = [
    *_EPISODE_HEAD, *_HARBOR_COLUMNS,
    *(FromTrial(name) for name in TrialRecord.model_fields
      if name not in _placed(SFT_COLUMNS, _EPISODE_HEAD, _HARBOR_COLUMNS)
      and name not in UNPUBLISHED_TRIAL_FIELDS),
]
"""The episodes columns; a trial field placed nowhere else comes last."""

COPIED_TRIAL_FIELDS: tuple[str, ...] = tuple(dict.fromkeys(
    c.name for c in (*SFT_COLUMNS, *EPISODE_COLUMNS)
    if isinstance(c, FromTrial) and Role.COPIED in declared_roles(TrialRecord)[c.name]))
"""The trial fields the trajectory rows hold as the record has them (JSON form): those
declared ``Role.COPIED``, in column order."""

SftRow = trial_row_model("SftRow", """
    One trial as chat messages in the OpenAI wire form (see
    :class:`~termgrade.records.trial.ChatMessage` for the templates that need the arguments
    as a mapping).""", "trajectory_sft_row", SFT_COLUMNS)

EpisodeRow = trial_row_model("EpisodeRow", """
    The full episode of one trial, with metrics, per-test verdicts and exceptions: only
    what its ``sft`` row does not hold, joined to it by ``trial_id``. Step text that is in
    the sft messages verbatim is a span of them (``message_span``, ``observation_span``).

    The columns from ``date`` on are those of Harbor's trace export (``harbor traces
    export``) that the sft row lacks; its others are sft columns under Harbor's names
    (``conversations`` = messages, ``agent`` = scaffold, ``task`` = task_id,
    ``trial_name`` = trial_id, ``model``, ``model_provider``).
    """, "trajectory_episode_row", EPISODE_COLUMNS)


def schema_for(model: type[BaseModel]) -> pa.Schema:
    """The fixed Arrow schema of a row model's files, tagged with its schema name."""
    return arrow_schema(model)


# -- trajectories: config "traces" --------------------------------------------------------

class TraceToolCall(RowModel):
    id: str = Field(description="The call's id (a tool message's `tool_call_id` answers it).")
    name: str = Field(description="The function called.")
    arguments: LargeStr = Field(description="Its arguments: a JSON string, as written.")


class TraceMessage(RowModel):
    role: str = Field(description="user, assistant, system or tool.")
    content: LargeStr = Field(description="The message text (may be empty).")
    reasoning_content: LargeStr | None = Field(description="The model's reasoning, if any.")
    tool_calls: list[TraceToolCall] = Field(description="Tool calls of an assistant message.")
    tool_call_id: str | None = Field(description="On a tool message: the call it answers.")
    model: str | None = Field(description="On an assistant message: the model.")


class TraceRow(RowModel):
    """One trial's agent trace (its STS file, ``path``) as a row: ``load_dataset(repo,
    "traces")`` reads these; the Hub's trace viewer reads the STS files themselves."""

    row_schema: ClassVar[str | None] = "trajectory_trace_row"

    trial_id: str = Field(description="The trial (the STS session id).")
    task_id: str = Field(description="The task.")
    model: str = Field(description="The model graded.")
    harness: str = Field(description="The STS harness id (termgrade).")
    name: str = Field(description="The session's title: task / model / attempt.")
    path: str = Field(description="The trial's Session Trace Simple Format file in this repo.")
    session_json: LargeStr = Field(description="The STS session header line (the trial's "
                                   "outcome and configuration), as JSON.")
    messages: list[TraceMessage] = Field(description="The STS messages, in order.")
