"""A graded trial as the trial record every other stage reads (``labels``, builders)."""

from __future__ import annotations

import json
import re
from datetime import datetime

from termgrade.agent.loop import StopReason, Transcript
from termgrade.agent.scaffold import SCAFFOLD_NAME
from termgrade.core.text import head_and_tail
from termgrade.records.evidence import evidence_list, failure_lines
from termgrade.records.trial import ChatMessage, TrialRecord
from termgrade.records.verdict import TestVerdict
from termgrade.scoring.trial import RunOutcome

SOURCE = "termgrade grade"
ENDPOINT_UNUSABLE = "EndpointUnusable"
"""``exception_type`` of a trial whose endpoint refuses every request: the run stops."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def trial_id(task_id: str, model: str, attempt: int, retry_index: int,
             run: str | None = None) -> str:
    """Deterministic within a run, so a resumed run can never write the same trial twice,
    and unique across runs: it starts with the run's id (``job_id``). Runs written before
    runs had ids (``run`` None) keep the old form, so they still resume."""
    base = f"{task_id}__{_UNSAFE.sub('-', model)}__a{attempt}__r{retry_index}"
    return f"{run}__{base}" if run else base


def graded_record(*, task_id: str, model: str, attempt: int, retry_index: int,
                  outcome: RunOutcome, started_at: datetime, finished_at: datetime,
                  scaffold: str = SCAFFOLD_NAME, job_id: str | None = None) -> TrialRecord:
    """The record of one trial. An unscored outcome (infrastructure) is not counted."""
    counted = outcome.error is None and outcome.reward is not None
    reward = outcome.reward if counted else None
    verifier = outcome.verifier
    tests = [TestVerdict(name=t.name, outcome=t.outcome) for t in verifier.tests] \
        if verifier is not None and counted else []
    transcript = outcome.agent_run.transcript if outcome.agent_run else None
    failure = outcome.error or (outcome.failure if counted else None)
    record = TrialRecord(
        trial_id=trial_id(task_id, model, attempt, retry_index, job_id), job_id=job_id,
        task_id=task_id, model=model, scaffold=scaffold, attempt=attempt,
        reward=reward, passed=bool(counted and reward is not None and reward >= 1),
        counted=counted, tests=tests,
        n_tests_passed=sum(t.outcome == "passed" for t in tests) if tests else None,
        n_tests_failed=sum(t.outcome in ("failed", "error") for t in tests) if tests else None,
        duration_s=outcome.durations.get("total"),
        started_at=started_at, finished_at=finished_at,
        agent_timed_out=bool(transcript and transcript.stop_reason == StopReason.WALL_CLOCK),
        stop_reason=transcript.stop_reason if transcript is not None else None,
        exception_type=_exception_type(outcome, transcript, failure),
        exception_message=failure,
        retry_of=(trial_id(task_id, model, attempt, retry_index - 1, job_id)
                  if retry_index else None),
        retry_index=retry_index, source=SOURCE, attested=outcome.attested,
        left_out=outcome.left_out,
        http_retries=transcript.retries if transcript is not None else None)
    if transcript is not None:
        _add_transcript(record, transcript)
    if verifier is not None:
        _add_evidence(record, verifier.outcomes, verifier.evidence, verifier.output)
    return record


VERIFIER_OUTPUT_CHARS = 16_000
"""The verifier's output kept per trial: head and tail, the cut said in the text."""


def _add_evidence(record: TrialRecord, outcomes: dict[str, str],
                  evidence: dict[str, dict[str, object]], output: str) -> None:
    """Issue 34's fields: per-test evidence, the failing tests' one-line reasons, and the
    verifier's whole output (bounded, with the truncation shown)."""
    record.test_evidence = evidence_list(outcomes, evidence) if evidence else []
    record.failure_messages = failure_lines(record.test_evidence, limit=len(record.test_evidence))
    if output:
        record.verifier_output = head_and_tail(output, VERIFIER_OUTPUT_CHARS)


def _exception_type(outcome: RunOutcome, transcript: Transcript | None,
                    failure: str | None) -> str | None:
    if transcript is not None and transcript.endpoint_fatal:
        return ENDPOINT_UNUSABLE
    if outcome.error:
        return "InfrastructureError"
    return "GradingFailure" if failure else None


def _add_transcript(record: TrialRecord, transcript: Transcript) -> None:
    record.messages = [ChatMessage.model_validate(_message(m)) for m in transcript.messages]
    record.messages_source = "chat"
    record.episode = transcript.steps
    record.per_turn = transcript.per_turn
    record.token_turns = transcript.token_turns or None
    record.turns = sum(1 for step in transcript.steps if step.source == "agent")
    record.input_tokens = transcript.total("input_tokens")
    record.output_tokens = transcript.total("output_tokens")
    record.cached_tokens = transcript.total("cached_tokens")


def _message(message: dict[str, object]) -> dict[str, object]:
    """Tool calls as received may lack ``type`` or carry extra keys: keep the template's."""
    kept = {k: v for k, v in message.items()
            if k in ("role", "content", "tool_calls", "tool_call_id", "name",
                     "reasoning_content")}
    calls = kept.get("tool_calls")
    if isinstance(calls, list):
        kept["tool_calls"] = [
            {"id": str(c.get("id", "")), "type": "function",
             "function": {"name": str((c.get("function") or {}).get("name", "")),
                          "arguments": _text((c.get("function") or {}).get("arguments"))}}
            for c in calls if isinstance(c, dict)]
    if "content" in kept and not isinstance(kept["content"], str | None):
        kept["content"] = _text(kept["content"])
    kept.setdefault("content", None)
    return kept


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value)
