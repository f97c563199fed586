"""Row models of every config the builders write: one source for the parquet schemas
(:mod:`termgrade.records.arrow`), the JSON Schemas in schemas/ and the card's field tables.

Timestamps are ISO 8601 strings; ``archive`` is bytes (base64 in JSON Schema checks).
"""

from __future__ import annotations

from typing import Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.arrow import Int32, LargeStr, arrow_schema
from termgrade.records.label import LabelRow


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")


# -- environments: config "tasks" ---------------------------------------------------------

class FileRow(_Row):
    path: str = Field(description="POSIX path relative to the task directory.")
    size: int = Field(ge=0, description="Size in bytes.")
    sha256: str = Field(description="sha256 of the content, hex.")
    mode: Int32 = Field(ge=0, description="Permission bits (e.g. 493 = 0o755); the Hub drops them.")


class TaskRow(_Row):
    """One executable task: its text, config, verification and exact archive."""

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


# -- bandcentral: config "tasks" ----------------------------------------------------------

class BandcentralTaskRow(TaskRow):
    """A selected train or validation task with the base model's measured pass rate."""

    base_model: str | None = Field(description="Model whose pass rate selected the task.")
    base_scaffold: str | None = Field(description="Scaffold that model was graded in.")
    base_pass_rate: float | None = Field(ge=0, le=1, description="Measured base pass rate.")
    band: str | None = Field(description="Difficulty band of base_pass_rate.")
    n_counted: Int32 | None = Field(ge=0, description="Counted trials behind base_pass_rate.")
    k: Int32 | None = Field(ge=0, description="Attempts planned per task for the base model.")


# -- bandcentral: config "verl" (verl's RL dataset format) ---------------------------------

class PromptMessage(_Row):
    role: str = Field(description="system or user.")
    content: LargeStr = Field(description="Message text.")


class RewardModel(_Row):
    style: str = Field(description="verl reward style: 'rule' (a programmatic verifier).")
    ground_truth: str = Field(description="The task_id whose verifier scores the rollout.")


class ExtraInfo(_Row):
    split: str = Field(description="train or validation.")
    index: int = Field(ge=0, description="Row index within the split.")
    task_id: str = Field(description="The task's id.")
    task_dir: str = Field(description="The task's directory, relative to the repo (and to a "
                          "`termgrade train prepare` run, which unpacks it there): "
                          "tasks/<task_id>.")
    tests_dir: str = Field(description="Its tests: task_dir/tests.")
    image: str = Field(description="The image tag the grader builds the task as.")
    archive_sha256: str = Field(description="sha256 of the task's archive (config tasks).")
    base_pass_rate: float | None = Field(description="Measured base pass rate.")
    domain: str | None = Field(description="Task domain.")
    difficulty: str | None = Field(description="Authored difficulty.")


class VerlPromptRow(_Row):
    """One prompt of verl's RL dataset (``data.train_files`` / ``data.val_files``)."""

    data_source: str = Field(description="Dataset name; verl routes reward functions by it.")
    prompt: list[PromptMessage] = Field(description="Chat messages fed to the chat template.")
    ability: str = Field(description="Task family: 'terminal'.")
    reward_model: RewardModel = Field(description="How the reward is computed.")
    extra_info: ExtraInfo = Field(description="Split, index, task id and selection data.")
    agent_name: str = Field(description="verl agent loop to run the prompt with: termgrade_bash, "
                            "TermGrade's bash agent loop (its tools and reward: the task's "
                            "own verifier).")


# -- trajectories -------------------------------------------------------------------------

class ToolFunctionRow(_Row):
    name: str = Field(description="The tool called.")
    arguments: LargeStr = Field(description="Its arguments: a JSON text, exactly as the model "
                                "wrote it (possibly malformed). Templates that tojson or "
                                "iterate arguments need it parsed (json.loads) first.")


class ToolCallRow(_Row):
    id: str = Field(description="The call's id; the tool message answering it names it.")
    type: str = Field(description="Always 'function'.")
    function: ToolFunctionRow = Field(description="The function called and its arguments.")


class MessageRow(_Row):
    """A chat message in the OpenAI form (the trial record's ``messages``, field for field).
    A template that prints a call's arguments takes it unmodified; one that ``tojson``s
    or iterates them needs :func:`termgrade.builders.sft_messages.with_argument_mappings`.
    Fields a message does not use are null."""

    role: str = Field(description="system, user, assistant or tool.")
    content: LargeStr | None = Field(description="Message text, exactly as the model saw or "
                                     "wrote it; null for an assistant turn that only "
                                     "called tools.")
    tool_calls: list[ToolCallRow] | None = Field(
        default=None, description="Tool calls of an assistant turn (bash-tool scaffold).")
    tool_call_id: str | None = Field(default=None,
                                     description="The call a tool message answers.")
    name: str | None = Field(default=None, description="The tool's name, on a tool message.")
    reasoning_content: LargeStr | None = Field(
        default=None, description="The model's reasoning, when the endpoint returned it "
                                  "separately.")


class SftRow(_Row):
    """One trial as chat messages in the OpenAI wire form (see :class:`MessageRow` for the
    templates that need the arguments as a mapping)."""

    trial_id: str = Field(description="Unique id of the trial.")
    task_id: str = Field(description="The task's id.")
    model: str = Field(description="Model name.")
    scaffold: str = Field(description="Agent scaffold, e.g. terminus-2.")
    attempt: Int32 = Field(ge=0, description="0-based attempt within task x model x scaffold.")
    reward: float | None = Field(description="Verifier reward; null when unscored.")
    passed: bool = Field(description="reward >= 1 on a counted trial.")
    counted: bool = Field(description="False for infrastructure errors and retries past k.")
    retry_index: Int32 = Field(ge=0, description="0 for a first try, n for the n-th retry.")
    split: str | None = Field(description="The task's split (--splits at build time: unseen, "
                                          "or the train / validation split selection named); "
                                          "null when the build had no split flags.")
    pass_rate: float | None = Field(description="Pass rate of the task under this trial's model "
                                                "and scaffold (--labels); null when unlabelled.")
    band: str | None = Field(description="Difficulty band of pass_rate; null when unlabelled.")
    model_provider: str | None = Field(description="Provider prefix of the model name "
                                                   "(org/model), or Harbor's provider.")
    messages_source: str = Field(
        description="How messages were obtained. Exact: chat (the scaffold's own log, as sent "
                    "and received), episodes (prompt/response files), atif (Harbor trajectory), "
                    "recorded (given, source unstated). Rebuilt: atif-rebuilt (assistant turns "
                    "re-serialized from the trajectory), episode-rebuilt (derived from the "
                    "episode steps). none: no messages (an infrastructure error, a synthetic "
                    "trial).")
    messages: list[MessageRow] = Field(description="SFT-ready chat messages.")


class TestRow(_Row):
    name: str = Field(description="Test (assertion) name.")
    outcome: str = Field(description="passed, failed, skipped or error.")


class TurnRow(_Row):
    turn: Int32 = Field(ge=0, description="0-based turn index.")
    input_tokens: int | None = Field(description="Prompt tokens of this turn.")
    output_tokens: int | None = Field(description="Completion tokens of this turn.")
    cached_tokens: int | None = Field(description="Prompt tokens served from cache.")
    duration_s: float | None = Field(description="Wall time of this turn.")


class TextSpan(_Row):
    """Where a step's text is in the trial's ``sft`` messages: it is
    ``messages[message_index]["content"][start:end]`` (character offsets)."""

    message_index: Int32 = Field(ge=0, description="Index of the message in the sft row's "
                                                   "messages.")
    start: int = Field(ge=0, description="First character of the text in its content.")
    end: int = Field(ge=0, description="One past its last character.")


class StepRow(_Row):
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


class EpisodeRow(_Row):
    """The full episode of one trial, with metrics, per-test verdicts and exceptions: only
    what its ``sft`` row does not hold, joined to it by ``trial_id``. Step text that is in
    the sft messages verbatim is a span of them (``message_span``, ``observation_span``).

    The columns from ``date`` on are those of Harbor's trace export (``harbor traces
    export``) that the sft row lacks; its others are sft columns under Harbor's names
    (``conversations`` = messages, ``agent`` = scaffold, ``task`` = task_id,
    ``trial_name`` = trial_id, ``model``, ``model_provider``).
    """

    trial_id: str = Field(description="Unique id of the trial: the key of its sft row.")
    retry_of: str | None = Field(description="trial_id this trial retries, if any.")
    tests: list[TestRow] = Field(description="Named per-test verdicts.")
    failed_tests: list[str] = Field(description="Names of the tests that failed or errored.")
    n_tests_passed: int | None = Field(description="Tests passed.")
    n_tests_failed: int | None = Field(description="Tests failed or errored.")
    input_tokens: int | None = Field(description="Prompt tokens over the trial.")
    output_tokens: int | None = Field(description="Completion tokens over the trial.")
    cached_tokens: int | None = Field(description="Cached prompt tokens over the trial.")
    turns: int | None = Field(description="Agent turns.")
    per_turn: list[TurnRow] = Field(description="Per-turn token and time metrics.")
    duration_s: float | None = Field(description="Wall time of the trial.")
    started_at: str | None = Field(description="ISO 8601 start time.")
    finished_at: str | None = Field(description="ISO 8601 end time.")
    agent_timed_out: bool = Field(description="The agent hit its time limit (still graded).")
    exception_type: str | None = Field(description="Exception class, if one was raised.")
    exception_message: LargeStr | None = Field(description="Exception message.")
    source: str = Field(description="Where the record came from (a Harbor job path, ...).")
    steps: list[StepRow] = Field(description="Every step: message, keystrokes, terminal frame.")
    date: str | None = Field(description="Harbor: ISO start time.")
    episode: str = Field(description="Harbor: last episode, 'episode-<n>'.")
    run_id: str = Field(description="Harbor: job id (the record's job_id; its source when it "
                                    "has none).")
    result: str | None = Field(description="Harbor: reward as text, or the exception name.")
    tool_definitions: LargeStr | None = Field(description="Harbor: tool definitions as JSON.")
    instruction: LargeStr = Field(description="Harbor: the task's instruction.")
    verifier_output: LargeStr | None = Field(description="Harbor: verifier stdout, if kept.")
    trace_source: Literal["main"] = Field(description="Harbor: 'main' (no subagents).")


SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "env_task_row": TaskRow,
    "bandcentral_task_row": BandcentralTaskRow,
    "verl_prompt_row": VerlPromptRow,
    "trajectory_sft_row": SftRow,
    "trajectory_episode_row": EpisodeRow,
}
"""Row models by schema name (schemas/<name>.schema.json); loaded by termgrade.validate.schemas."""

ROW_MODELS: dict[str, type[BaseModel]] = {**SCHEMA_MODELS, "label": LabelRow}
"""Every row model a config may use, by the name its parquet metadata carries."""


def schema_for(name: str) -> pa.Schema:
    return arrow_schema(ROW_MODELS[name], name)
