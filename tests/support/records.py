"""Typed records written as JSONL, for the builders' and training tests.

:func:`trial` makes a Terminus-2 :class:`~termgrade.records.TrialRecord` (odd attempts pass,
episode and messages included) and :func:`write_trials` writes a list of them;
:func:`label` and :func:`verified` make a label row and a verify record, and
:func:`write_jsonl` writes any list of pydantic rows. (The labels tests' plain-dict rows
are in :mod:`tests.support.labels`.)
"""

from __future__ import annotations

from pathlib import Path

from termgrade.records import (
    ChatMessage,
    EpisodeStep,
    LabelRow,
    TestVerdict,
    TrialRecord,
    TurnMetrics,
)
from termgrade.task.digest import task_digest
from termgrade.verify.record import VerifyRecord
from termgrade.verify.verdict import Verdict


def write_jsonl(path: Path, rows: list[object]) -> Path:
    """Write pydantic ``rows`` as JSONL at ``path``; return ``path``."""
    path.write_text("".join(r.model_dump_json() + "\n" for r in rows))  # type: ignore[attr-defined]
    return path


def label(task_id: str, model: str, rate: float | None, k: int = 8) -> LabelRow:
    """A Terminus-2 label row of pass rate ``rate`` over ``k`` attempts (``None``: unlabelled)."""
    n_counted = k if rate is not None else 0
    return LabelRow(task_id=task_id, model=model, scaffold="terminus-2", pass_rate=rate,
                    band=None if rate is None else ("mid" if 0.25 <= rate <= 0.75 else "edge"),
                    n_counted=n_counted, k=k, n_passed=round((rate or 0) * n_counted))


def verified(root: Path, n: int = 2) -> VerifyRecord:
    return VerifyRecord(task_id=root.name, task_digest=task_digest(root), verdict=Verdict.VERIFIED,
                        oracle_rewards=[1.0, 1.0], nop_reward=0.0, n_assertions=n, tests=[],
                        tampered=[], durations={"build": 1.0}, error=None)


def trial(i: int, task_id: str = "alpha", *, frame: str = "ok\n", turns: int = 2,
          messages: bool = True) -> TrialRecord:
    """Trial ``i`` of ``task_id``: passes when ``i`` is odd, ``turns`` agent steps each
    observing ``frame``, recorded messages unless ``messages`` is false."""
    passed = i % 2 == 1
    steps = [EpisodeStep(index=0, source="user", message="Write hello.")]
    for t in range(turns):
        steps.append(EpisodeStep(index=t + 1, source="agent", message=f"plan {t}",
                                 keystrokes=[f"echo {t}\n"], observation=frame,
                                 input_tokens=100 + t, output_tokens=10))
    return TrialRecord(
        trial_id=f"{task_id}__{i}", task_id=task_id, model="org/model-a" if i % 3 else "model-b",
        scaffold="terminus-2", attempt=i, reward=1.0 if passed else 0.0, passed=passed,
        counted=True,
        tests=[TestVerdict(name="test_one", outcome="passed"),
               TestVerdict(name="test_two", outcome="passed" if passed else "failed")],
        n_tests_passed=2 if passed else 1, n_tests_failed=0 if passed else 1,
        turns=turns, per_turn=[TurnMetrics(turn=t, input_tokens=100 + t) for t in range(turns)],
        source="jobs/run-1",
        messages=[ChatMessage(role="user", content="Write hello.\n\n  keep spaces  "),
                  ChatMessage(role="assistant", content='{"commands": []}')]
        if messages else None,
        episode=steps)


def write_trials(path: Path, trials: list[TrialRecord]) -> Path:
    """Write ``trials`` as trial JSONL at ``path``; return ``path``."""
    path.write_text("".join(t.model_dump_json() + "\n" for t in trials))
    return path
