"""Runs written for the viewer's tests: synthetic corpora and hand-made hostile trials."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from termgrade.core.text import head_and_tail
from termgrade.records import ChatMessage, TestVerdict, TrialRecord, TurnMetrics
from termgrade.records.evidence import TestEvidence
from termgrade.records.trial import ToolCall, ToolFunction
from termgrade.trialsets import write_trials
from termgrade.trialsets.synthetic import generate
from termgrade.trialsets.synthetic_config import SyntheticConfig, SyntheticModel
from termgrade.trialsets.synthetic_transcript import TranscriptMaker

SCRIPT = "<script>document.title='pwned'</script>"
FINDINGS = ("/logs/verifier/reward.txt: written by the agent",
            "/tests/conftest.py: planted")


def synthetic_run(out: Path, *, tasks: int = 12, transcripts: bool = True,
                  models: tuple[SyntheticModel, ...] | None = None) -> Path:
    """``out/trials.jsonl``: a small synthetic corpus (infra errors and near-misses too)."""
    models = models or (SyntheticModel("synthetic-model-a", 4, mean=0.5),
                        SyntheticModel("synthetic-model-b", 2, mean=0.7))
    corpus = generate(SyntheticConfig(models=models, n_tasks=tasks, seed=3))
    records: Any = corpus.records
    if transcripts:
        records = TranscriptMaker(3, corpus_chars=200_000).add_all(corpus.records)
    out.mkdir(parents=True, exist_ok=True)
    write_trials(out / "trials.jsonl", records)
    return out


def hostile_trial(attempt: int = 0, **changes: Any) -> TrialRecord:
    """A counted, failed trial whose every text is agent-written HTML, with a truncated
    tool output and integrity findings."""
    long = head_and_tail("\n".join(str(i) for i in range(5000)), 400, "; narrow the command")
    fields: dict[str, Any] = dict(
        trial_id=f"hostile__m__a{attempt}__r0", task_id="hostile-task", model="model-x",
        scaffold="bash-tool", attempt=attempt, reward=0.0, passed=False, counted=True,
        tests=[TestVerdict(f"test_{SCRIPT}", "failed"), TestVerdict("test_ok", "passed")],
        n_tests_passed=1, n_tests_failed=1, turns=2, input_tokens=1200, output_tokens=300,
        duration_s=42.5, exception_type="GradingFailure",
        exception_message="integrity findings: " + "; ".join(FINDINGS),
        source="termgrade grade", messages_source="chat",
        per_turn=[TurnMetrics(turn=0, input_tokens=500, output_tokens=100),
                  TurnMetrics(turn=1, input_tokens=700, output_tokens=200)],
        messages=[
            ChatMessage(role="system", content="You are an agent."),
            ChatMessage(role="user", content=f"Task: render {SCRIPT}"),
            ChatMessage(role="assistant", content=f"I will print {SCRIPT}",
                        tool_calls=[ToolCall(id="c1", function=ToolFunction(
                            name="bash", arguments='{"command": "echo \\"' + SCRIPT.replace(
                                '"', '\\"') + '\\"; seq 5000"}'))]),
            ChatMessage(role="tool", tool_call_id="c1", name="bash",
                        content=f"{SCRIPT}\n{long}"),
            ChatMessage(role="assistant", content=None, tool_calls=[ToolCall(
                id="c2", function=ToolFunction(name="finish", arguments="{not json"))]),
            ChatMessage(role="tool", tool_call_id="c2", name="finish", content="finished"),
        ],
        verifier_output=f"FAILED test_{SCRIPT}",
        test_evidence=[TestEvidence(name=f"tests/test_x.py::test_{SCRIPT}", outcome="failed",
                                    duration_s=0.5, message=f"AssertionError: rows {SCRIPT}",
                                    repr="assert 0 == 3", output="parsed 0 rows"),
                       TestEvidence(name="tests/test_x.py::test_ok", outcome="passed")],
        failure_messages=[f"test_{SCRIPT}: AssertionError: rows {SCRIPT}"])
    fields.update(changes)
    return TrialRecord(**fields)


def hostile_run(out: Path) -> Path:
    """``out/trials.jsonl``: two hostile trials and one passing trial of the same task."""
    out.mkdir(parents=True, exist_ok=True)
    passing = hostile_trial(2, trial_id="hostile__m__a2__r0", reward=1.0, passed=True,
                            tests=[TestVerdict("test_ok", "passed")], n_tests_passed=1,
                            n_tests_failed=0, exception_type=None, exception_message=None)
    write_trials(out / "trials.jsonl", [hostile_trial(0), hostile_trial(1), passing])
    return out
