"""One candidate's repair loop: ask, parse, write, verify; feed each failure back.

Round 0 asks for the task; each later round (up to ``max_repairs``) sends the
conversation so far plus what went wrong: the parse error, or the verify verdict with its
error and failing tests. The loop stops at the first ``verified`` verdict. An endpoint
failure ends the candidate as ``endpoint_error`` (infrastructure: a resumed run redoes
it). Nothing the model writes can raise out of here: every failure is a recorded round.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termgrade.agent.client import ChatClient
from termgrade.agent.errors import ContextLengthError, EndpointError, RequestRejected
from termgrade.core.text import head_and_tail, strip_ansi
from termgrade.generate.answer import parse_answer
from termgrade.generate.errors import AnswerError
from termgrade.generate.paths import GenerationPaths, write_task
from termgrade.generate.prompting import Prompts
from termgrade.generate.records import CandidateRecord, GenerationFailure, Round
from termgrade.generate.spec import CandidateSpec
from termgrade.records.verdict import Outcome
from termgrade.verify.record import VerifyRecord
from termgrade.verify.verdict import Verdict

Verifier = Callable[[Path], VerifyRecord]
"""Verifies one task directory (default: :func:`termgrade.verify.runner.safe_verify_task`)."""
MAX_FEEDBACK_CHARS = 3000


@dataclass
class LoopSettings:
    """What every candidate of a run shares."""

    client: ChatClient
    prompts: Prompts
    paths: GenerationPaths
    verify: Verifier
    base_image: str
    max_repairs: int = 2
    min_tests: int = 10
    containers: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(2))
    """Bounds the candidates being built and verified at once."""
    params: dict[str, Any] = field(default_factory=dict)
    """Extra request fields (temperature, max_tokens)."""


def verify_feedback(record: VerifyRecord) -> str:
    """What the model is told about a verify record that is not ``verified``."""
    lines = [f"verdict: {record.verdict.value}"]
    if record.oracle_rewards:
        lines.append("reference solution rewards: "
                     + ", ".join("unscored" if r is None else f"{r:g}"
                                 for r in record.oracle_rewards))
    if record.nop_reward is not None:
        lines.append(f"untouched container reward: {record.nop_reward:g} (must be 0)")
    failing = [t.name for t in record.tests if t.outcome is not Outcome.PASSED]
    if failing and record.verdict is not Verdict.VACUOUS:
        lines.append("tests not passed by the reference solution: " + ", ".join(failing[:30]))
    if record.error:
        lines.append(strip_ansi(record.error))
    return head_and_tail("\n".join(lines), MAX_FEEDBACK_CHARS)


def _ask(settings: LoopSettings, messages: list[dict[str, str]], round_: Round) -> str | None:
    began = time.monotonic()
    try:
        completion = settings.client.complete(messages, [], settings.params)
        content = completion.message.get("content")
        text = content if isinstance(content, str) else ""
    except (EndpointError, RequestRejected, ContextLengthError) as exc:
        round_.endpoint_error = f"{type(exc).__name__}: {exc}"[:2000]
        return None
    finally:
        round_.model_s = round(time.monotonic() - began, 4)
    round_.response = text
    return text


def _verify(settings: LoopSettings, spec: CandidateSpec, round_: Round) -> VerifyRecord:
    waited = time.monotonic()
    with settings.containers:
        began = time.monotonic()
        record = settings.verify(settings.paths.task_dir(spec.candidate_id))
        took = time.monotonic() - began
    round_.container_wait_s = round(began - waited, 4)
    round_.build_s = round(record.durations.get("build", 0.0), 4)
    round_.verify_s = round(max(0.0, took - round_.build_s), 4)
    round_.verify = record
    return record


def run_candidate(settings: LoopSettings, spec: CandidateSpec) -> CandidateRecord:
    """Generate, verify and repair one candidate; its full history."""
    messages = settings.prompts.first(spec, base_image=settings.base_image,
                                      min_tests=settings.min_tests)
    rounds: list[Round] = []
    outcome = GenerationFailure.UNPARSABLE.value
    for n in range(settings.max_repairs + 1):
        round_ = Round(round=n, prompt=messages[-1]["content"], response=None)
        rounds.append(round_)
        text = _ask(settings, messages, round_)
        if text is None:
            outcome = GenerationFailure.ENDPOINT_ERROR.value
            break
        messages.append({"role": "assistant", "content": text})
        try:
            task = parse_answer(text, base_image=settings.base_image, domain=spec.domain,
                                difficulty=spec.difficulty)
        except AnswerError as exc:
            round_.parse_error = str(exc)
            outcome, stage, feedback = GenerationFailure.UNPARSABLE.value, "parse", str(exc)
        else:
            write_task(task, settings.paths.task_dir(spec.candidate_id))
            record = _verify(settings, spec, round_)
            outcome, stage, feedback = record.verdict.value, "verify", verify_feedback(record)
            if record.verdict is Verdict.VERIFIED:
                break
        if n < settings.max_repairs:
            messages.append({"role": "user", "content": settings.prompts.repair(
                round=n + 1, max_rounds=settings.max_repairs, stage=stage, feedback=feedback)})
    return CandidateRecord(
        candidate_id=spec.candidate_id, domain=spec.domain, difficulty=spec.difficulty,
        topic=spec.topic, model=settings.client.endpoint.model,
        prompts_version=settings.prompts.version, system_prompt=messages[0]["content"],
        rounds=rounds, outcome=outcome)
