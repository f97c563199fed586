"""The trial record: one graded attempt of one model on one task.

Field names ``task_id``, ``model``, ``scaffold``, ``attempt``, ``reward``, ``passed`` and
``counted`` are fixed: other tools read them. ``counted`` is False for infrastructure
errors, which are kept apart from task failures; an agent that timed out but was graded
still counts. "Unscored" is ``reward = None``, never 0.

The nested models (:class:`ChatMessage`, :class:`ToolCall`, :class:`TurnMetrics`, the
:class:`~termgrade.records.verdict.TestVerdict` of ``tests``) are also the nested columns
of the trajectories dataset (:mod:`termgrade.builders.rows`): their Arrow types
(``LargeStr`` for big text, ``Int32`` for small counts) are declared here, once, and read by
the one converter (:mod:`termgrade.records.arrow`).

Every :class:`TrialRecord` field declares its roles (:class:`~termgrade.records.roles.Role`)
in its annotation, and the lists that split the record are derived from them: ``SCORED``
(recomputed by ``termgrade regrade``; the rest of a regraded trial is the source's),
``PUBLISHED`` (an ``sft`` or ``episodes`` column of its name), ``COPIED`` (that column holds
the record's value as is; ``ROW`` is both), ``SHOWN`` (the viewer's trial summaries),
``NONE`` for none. A new field declares its roles here or every import fails naming it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.arrow import Int32, LargeStr
from termgrade.records.evidence import TestEvidence
from termgrade.records.roles import Role
from termgrade.records.verdict import TestVerdict
from termgrade.records.version import RecordFormat

TRIAL_SCHEMA_VERSION = "1.0"
TRIAL_FORMAT = RecordFormat(schema="trial", version=TRIAL_SCHEMA_VERSION,
                            writer="termgrade ingest")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TurnMetrics(_Record):
    turn: Int32 = Field(ge=0, description="0-based turn index.")
    input_tokens: int | None = Field(None, ge=0, description="Prompt tokens of this turn.")
    output_tokens: int | None = Field(None, ge=0, description="Completion tokens of this turn.")
    cached_tokens: int | None = Field(None, ge=0, description="Prompt tokens served from cache.")
    duration_s: float | None = Field(None, ge=0, description="Wall time of this turn.")


class ToolFunction(_Record):
    name: str = Field(description="The tool called.")
    arguments: LargeStr = Field(description="Its arguments: a JSON text, exactly as the model "
                                "wrote it (possibly malformed). Templates that tojson or "
                                "iterate arguments need it parsed (json.loads) first.")


class ToolCall(_Record):
    """One tool call of an assistant message, in the OpenAI chat form."""

    id: str = Field(description="The call's id; the tool message answering it names it.")
    type: str = Field("function", description="Always 'function'.")
    function: ToolFunction = Field(description="The function called and its arguments.")


class ChatMessage(_Record):
    """One chat message in the OpenAI form, which ``apply_chat_template`` takes unmodified.

    Scaffolds with tool calling (``bash-tool``) put ``tool_calls`` on assistant messages and
    answer each with a ``tool`` message naming its ``tool_call_id``; Terminus-2 writes its
    JSON into ``content``. Absent fields are left out (None). A template that prints a
    call's arguments takes it unmodified; one that ``tojson``s or iterates them needs
    :func:`termgrade.builders.sft_messages.with_argument_mappings`."""

    role: str = Field(description="system, user, assistant or tool.")
    content: LargeStr | None = Field(
        None, description="The message text, exactly as the model saw or wrote it; null for "
        "an assistant turn that only called tools.")
    tool_calls: list[ToolCall] | None = Field(None, description="Tool calls of an assistant turn.")
    tool_call_id: str | None = Field(None, description="The call a tool message answers.")
    name: str | None = Field(None, description="The tool's name, on a tool message.")
    reasoning_content: LargeStr | None = Field(
        None, description="The model's reasoning, when the endpoint returns it separately.")


class TokenTurn(_Record):
    """One assistant turn as the endpoint sampled it (``grade --logprobs``): the tokens it
    returned, their log probabilities and ids, why it stopped, and what served it. Each
    field is what the endpoint said, null where it said nothing (an endpoint without
    logprobs gives only ``finish_reason``); the three token lists, when present, are as long
    as each other and in sampling order."""

    turn: Int32 = Field(ge=0, description="0-based turn index (per_turn's turn; for "
                        "bash-tool the episode step's index).")
    message_index: Int32 | None = Field(
        None, ge=0, description="Index in the trial's messages (the sft row's messages) of "
        "the assistant message this turn's reply became; null when it is not there.")
    finish_reason: str | None = Field(
        None, description="The choice's finish_reason (stop, tool_calls, length, ...).")
    tokens: list[str] | None = Field(
        None, description="The sampled tokens as the endpoint wrote them (logprobs.content[]"
        ".token; with vLLM's return_tokens_as_token_ids, 'token_id:N').")
    token_ids: list[int] | None = Field(
        None, description="The sampled token ids, where the endpoint gives them (vLLM's "
        "return_token_ids, or tokens of the form 'token_id:N'); null otherwise.")
    logprobs: list[float] | None = Field(
        None, description="The log probability of each sampled token, as returned.")
    model: str | None = Field(None, description="The model the response names.")
    system_fingerprint: str | None = Field(
        None, description="The response's system_fingerprint (the serving configuration).")
    model_revision: str | None = Field(
        None, description="The served model's revision, where the response says (a "
        "model_revision field).")
    tokenizer_revision: str | None = Field(
        None, description="The tokenizer's revision, where the response says (a "
        "tokenizer_revision field).")
    chat_template_digest: str | None = Field(
        None, description="A digest of the chat template the endpoint applied, where the "
        "response says (a chat_template_digest field).")


class EpisodeStep(_Record):
    """One step of the full episode: what the agent said, typed, and saw."""

    index: int = Field(ge=0, description="0-based step index.")
    source: str = Field(description="agent, user or system.")
    message: str = Field("", description="The model's message (analysis/plan) or the prompt.")
    keystrokes: list[str] = Field(default_factory=list,
                                  description="Keystrokes sent to the terminal, in order.")
    observation: str = Field("", description="The terminal frame the agent saw after the step.")
    is_valid_tool_call: bool | None = Field(None, description="False when no valid call parsed.")
    input_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)
    cached_tokens: int | None = Field(None, ge=0)
    timestamp: datetime | None = None


class TrialRecord(_Record):
    schema_version: Annotated[str, TRIAL_FORMAT, Role.NONE] = Field(
        TRIAL_SCHEMA_VERSION, description="Format version.")
    trial_id: Annotated[str, Role.ROW | Role.SHOWN] = Field(
        description="Unique id of the trial across runs (Harbor's trial "
        "name; `termgrade grade` starts it with the run's job_id).")
    task_id: Annotated[str, Role.ROW | Role.SHOWN] = Field(
        description="The task's id (its directory name).")
    model: Annotated[str, Role.ROW | Role.SHOWN] = Field(
        description="Model name; for oracle/nop runs, the agent's name.")
    scaffold: Annotated[str, Role.ROW | Role.SHOWN] = Field(
        description="Agent scaffold, e.g. terminus-2, bash-tool, oracle.")
    attempt: Annotated[int, Role.ROW | Role.SHOWN] = Field(
        ge=0, description="0-based attempt index within task x model x scaffold.")
    reward: Annotated[float | None, Role.SCORED | Role.ROW | Role.SHOWN] = Field(
        description="Verifier reward; null when unscored.")
    passed: Annotated[bool, Role.SCORED | Role.ROW | Role.SHOWN] = Field(
        description="reward >= 1 on a counted trial; False otherwise.")
    counted: Annotated[bool, Role.SCORED | Role.ROW | Role.SHOWN] = Field(
        description="False for infrastructure errors (never a task failure).")
    tests: Annotated[list[TestVerdict], Role.SCORED | Role.ROW] = Field(
        default_factory=list, description="Per-test verdicts.")
    n_tests_passed: Annotated[int | None, Role.SCORED | Role.ROW | Role.SHOWN] = Field(
        None, ge=0, description="Tests passed.")
    n_tests_failed: Annotated[int | None, Role.SCORED | Role.ROW | Role.SHOWN] = Field(
        None, ge=0, description="Tests failed or errored.")
    input_tokens: Annotated[int | None, Role.ROW | Role.SHOWN] = Field(
        None, ge=0, description="Prompt tokens over the trial.")
    output_tokens: Annotated[int | None, Role.ROW | Role.SHOWN] = Field(
        None, ge=0, description="Completion tokens over the trial.")
    cached_tokens: Annotated[int | None, Role.ROW] = Field(
        None, ge=0, description="Cached prompt tokens.")
    turns: Annotated[int | None, Role.ROW | Role.SHOWN] = Field(
        None, ge=0, description="Agent turns (episodes).")
    per_turn: Annotated[list[TurnMetrics], Role.ROW] = Field(
        default_factory=list, description="Per-turn metrics.")
    duration_s: Annotated[float | None, Role.ROW | Role.SHOWN] = Field(
        None, ge=0, description="Wall time of the whole trial.")
    started_at: Annotated[datetime | None, Role.SCORED | Role.ROW] = Field(
        None, description="When the trial started.")
    finished_at: Annotated[datetime | None, Role.SCORED | Role.ROW] = Field(
        None, description="When the trial finished.")
    agent_timed_out: Annotated[bool, Role.ROW] = Field(
        False, description="The agent hit its time limit (still graded).")
    stop_reason: Annotated[str | None, Role.ROW] = Field(
        None, description="Why the agent's episode ended: finished (the model said it was "
        "done), max_turns (the turn limit), wall_clock (the time limit), invalid_turns "
        "(replies with no valid tool call, too many in a row), context_length (the "
        "conversation no longer fit the model's context), request_rejected (the endpoint "
        "refused the conversation), endpoint_error (the endpoint failed), session_ended "
        "(terminus-2: the keys ended the shell), terminal_error (terminus-2: the terminal "
        "failed). Null when no model ran (oracle, nop, an infrastructure error before the "
        "agent) or not recorded (older files, ingests).")
    exception_type: Annotated[str | None, Role.SCORED | Role.ROW] = Field(
        None, description="Exception class, if one was raised.")
    exception_message: Annotated[LargeStr | None, Role.SCORED | Role.ROW | Role.SHOWN] = Field(
        None, description="Exception message.")
    retry_of: Annotated[str | None, Role.ROW] = Field(
        None, description="trial_id this trial retries, if any.")
    retry_index: Annotated[int, Role.ROW | Role.SHOWN] = Field(
        0, ge=0, description="0 for a first try, n for the n-th retry.")
    http_retries: Annotated[int | None, Role.NONE] = Field(
        None, ge=0, description="Model requests of the trial that were tried again (429, "
        "5xx, dropped connections, timeouts); null when not recorded.")
    source: Annotated[str, Role.ROW] = Field(
        description="Where it came from: a Harbor job path, or 'termgrade'.")
    job_id: Annotated[str | None, Role.NONE] = Field(
        None, description="The run's own id: the `termgrade grade` "
        "run that graded it (it also starts trial_id), or Harbor's job "
        "id when ingested from Harbor. Null in older files.")
    run_name: Annotated[str | None, Role.NONE] = Field(
        None, description="The name a user gave the run "
        "(`grade --run-name`); null when none was given.")
    model_provider: Annotated[str | None, Role.PUBLISHED] = Field(
        None, description="The model's provider, e.g. openai "
        "(Harbor's model_info.provider).")
    verifier_output: Annotated[LargeStr | None, Role.SCORED | Role.PUBLISHED] = Field(
        None, description="What the verifier printed (test-stdout.txt), head and tail kept "
        "within VERIFIER_OUTPUT_CHARS.")
    messages: Annotated[list[ChatMessage] | None, Role.PUBLISHED] = Field(
        None, description="SFT-ready chat messages (feed a chat template unmodified).")
    episode: Annotated[list[EpisodeStep] | None, Role.NONE] = Field(
        None, description="The full episode: every keystroke and terminal frame.")
    messages_source: Annotated[str | None, Role.PUBLISHED] = Field(
        None, description="Where messages came from: 'chat' (the agent's own message log), "
        "'episodes' (prompt/response files), 'atif' (trajectory, exact) or 'atif-rebuilt' "
        "(trajectory; assistant turns re-serialized from analysis/plan/commands).")
    attested: Annotated[bool | None, Role.SCORED | Role.ROW] = Field(
        None, description="The task is attestable and the reward was computed from the "
        "grader's signed per-test record (an alarm scores 0). False: an unattestable task "
        "(its test.sh runs no pytest, or decides outside it), graded by test.sh's own reward "
        "as Harbor reads it; labels, select, bandcentral and training leave such trials out "
        "by default. Null when not recorded (Harbor ingests, older files).")
    left_out: Annotated[str | None, Role.SCORED | Role.ROW] = Field(
        None, description="What the agent changed outside the task's transfer set, which "
        "never reached the verifier: how many entries and the top-most paths. Null when "
        "nothing was left out or not recorded.")
    task_digest: Annotated[str | None, Role.ROW] = Field(
        None, description="sha256 of the graded task's files (the environments rows' "
        "task_digest); `grade --reuse` reruns a trial whose task changed. Null when not "
        "recorded (older files, ingests without the task dir).")
    scaffold_digest: Annotated[str | None, Role.ROW] = Field(
        None, description="sha256 of the scaffold's configuration (prompt, tools, limits, "
        "sampling): trials of one task, model and scaffold digest are interchangeable.")
    scaffold_config: Annotated[str | None, Role.ROW] = Field(
        None, description="The scaffold's limits and sampling parameters as graded, a JSON "
        "object's text (what scaffold_digest covers besides the fixed prompt and tools).")
    # Issue 34: why a trial failed, in the verifier's own words (grouped, additive).
    test_evidence: Annotated[list[TestEvidence], Role.SCORED | Role.ROW] = Field(
        default_factory=list, description="Per attested test: outcome, duration and, for a "
        "failure, pytest's message, the assertion's short repr and what the test printed "
        "(bounded, secrets masked), from the grader's signed record; display data, never "
        "the reward. Empty when not recorded (unattestable tasks, ingests, older files).")
    failure_messages: Annotated[list[str], Role.SCORED | Role.ROW] = Field(
        default_factory=list, description="Names of the tests that failed or errored, each "
        "'name: message' (the first line of the failure message): a column to filter on.")
    scaffold_version: Annotated[str | None, Role.ROW] = Field(
        None, description="The registered scaffold's version (`grade --scaffold NAME`; "
        "termgrade/agent/scaffolds.py) as graded. Null when not recorded (older files, "
        "ingests).")
    regraded_from: Annotated[str | None, Role.ROW] = Field(
        None, description="`termgrade regrade`: the trial whose kept work this trial scored "
        "again against the task's current tests (its trial_id, in the source run). The "
        "agent's side (messages, tokens, turns) is that trial's; the verdicts are new. Null "
        "for a graded trial.")
    token_turns: Annotated[list[TokenTurn] | None, Role.ROW] = Field(
        None, description="`grade --logprobs`: each assistant turn as the endpoint sampled "
        "it (tokens, ids, log probabilities, finish reason, what served it), null where the "
        "endpoint said nothing. Null when not asked for (older files, ingests).")
