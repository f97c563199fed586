"""What the verifier decided, read from the scoring container: test.sh's reward file, its
per-test reports, the task's weights."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from termgrade.records.verdict import TestVerdict
from termgrade.scoring.errors import VerifierError
from termgrade.scoring.verifier.verdict_parsers import (
    parse_ctrf,
    parse_junit,
    parse_pytest_summary,
)
from termgrade.task import CONTAINER, Task


@dataclass
class VerifierResult:
    reward: float | None
    """None only when unscored: the engine failed, never the agent."""
    tests: list[TestVerdict] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)
    """Integrity findings: each one forces the reward to 0."""
    failure: str | None = None
    """Why scoring failed after the agent phase began: the trial scores 0 (the agent's)."""
    duration_s: float = 0.0
    """Wall time of test.sh inside the container."""
    output: str = ""
    raw_reward: float | None = None
    """What test.sh wrote, before findings, failures or the attestation forced 0."""
    attested: bool = False
    """The reward was computed from the signed per-test record: true on every trial of an
    attestable task (set by the trial), false when the task is unattestable and
    ``test.sh``'s own reward was taken (:func:`decide_unattested`)."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """Per attested test: passed, failed, error, skipped, xfailed, xpassed or deselected
    (:meth:`Attestation.outcomes`); what ``verify`` records of the reference's run."""
    evidence: dict[str, dict[str, object]] = field(default_factory=dict)
    """Per attested test (keyed as ``outcomes``): duration and, for a failure, its message,
    short repr and printed output (:meth:`Attestation.evidence`, bounded). Display data,
    set only on attestable tasks (an unattestable task's pytest runs agent code that could
    forge it); the reward never reads it."""
    image_changes: list[str] = field(default_factory=list)
    """The image's files changed while the tests ran (:mod:`termgrade.scoring.verifier.during`);
    what ``verify`` records of the reference's run, to tell the tests' own changes from
    agent code's."""

    @property
    def passed(self) -> bool:
        return self.reward is not None and self.reward >= 1.0

    def fail(self, reason: str) -> VerifierResult:
        """Score 0 for a reason the agent caused (first reason wins)."""
        self.failure = self.failure or reason
        self.reward = 0.0
        return self


def parse_reward(raw: bytes, source: PurePosixPath) -> float:
    """A finite number from reward.txt or reward.json; VerifierError names what is wrong."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        raise VerifierError(f"{source} is empty", fix="test.sh must write a number, e.g. 1 or 0")
    try:
        value: object = json.loads(text) if source.suffix == ".json" else float(text)
    except ValueError as exc:
        raise VerifierError(f"{source} holds {text[:80]!r}, not a number",
                            fix="write 1 or 0 (reward.json: {\"reward\": 1})") from exc
    if isinstance(value, dict):
        value = value.get("reward", next(iter(value.values()), None) if len(value) == 1 else None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise VerifierError(f"{source} has no numeric reward: {text[:80]!r}",
                            fix='reward.json must be {"reward": <number>}')
    if not math.isfinite(float(value)):
        raise VerifierError(f"{source} holds a non-finite reward {value!r}")
    return float(value)


def read_tests(outputs: dict[str, bytes], output: str) -> list[TestVerdict]:
    """Per-test verdicts from the reports test.sh wrote (informational; untrusted)."""
    # JUnit first: it keeps parametrize ids, which pytest-json-ctrf drops.
    reports = ((CONTAINER.junit_report, parse_junit), (CONTAINER.ctrf_report, parse_ctrf))
    for path, parser in reports:
        data = outputs.get(path.name)
        if data:
            try:
                return parser(data)
            except (ValueError, KeyError, TypeError):
                continue
    return parse_pytest_summary(output)


def read_reward(outputs: dict[str, bytes]) -> tuple[float, PurePosixPath]:
    """The lowest of reward.json and reward.txt (each can only lower the reward).
    VerifierError if neither exists or one is malformed."""
    found = []
    for source in (CONTAINER.reward_json, CONTAINER.reward_text):
        raw = outputs.get(source.name)
        if raw is not None:
            found.append((parse_reward(raw, source), source))
    if not found:
        raise VerifierError(f"wrote no reward; it must write {CONTAINER.reward_text}")
    return min(found, key=lambda pair: pair[0])


def read_weights(task: Task) -> dict[str, float] | None:
    """``tests/weights.json``: test name -> weight, for partial credit (as SETA ships).

    VerifierError names the file and what is wrong with it.
    """
    path = task.paths.tests_dir / WEIGHTS_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VerifierError(f"{path}: not JSON ({exc})",
                            fix='write {"test_name": weight, ...}') from exc
    if not isinstance(doc, dict) or not doc or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for v in doc.values()) or sum(doc.values()) <= 0:
        raise VerifierError(f"{path}: must map test names to non-negative numbers with a "
                            "positive sum", fix='write {"test_name": weight, ...}')
    return {str(k): float(v) for k, v in doc.items()}


WEIGHTS_FILE = "weights.json"
