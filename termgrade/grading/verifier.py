"""Running the task's verifier in the scoring container and reading what it decided.

The scoring container is a fresh container of the task image that has never run an agent
process. It holds the image, the agent's work (its writable paths, carried over by the
host), the task's tests on a read-only mount, and the attestation plugin. ``test.sh``
runs there with a fixed environment; the reward is read through the engine, and a
reward above 0 counts only when the attested per-test record backs it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from termgrade.errors import VerifierError
from termgrade.grading.attestation import PLUGIN_MODULE, Attestation
from termgrade.grading.policy import GRADER_DIR, GRADER_RUN_DIR, VERIFIER_PATH
from termgrade.grading.reports import (
    Outcome,
    TestVerdict,
    parse_ctrf,
    parse_junit,
    parse_pytest_summary,
)
from termgrade.task import CONTAINER, Task

MAX_STDOUT_COPY = 1 << 20
"""test.sh's output is also kept in /logs/verifier/test-stdout.txt (Harbor), capped."""
MAX_VERIFIER_OUTPUT = 32 << 20
"""Bytes of /logs/verifier read back (reports, reward, stdout copy)."""
ATTEST_CONFIG = f"{GRADER_RUN_DIR}/attest.json"


def verifier_env(task: Task) -> dict[str, str]:
    """The environment test.sh sees: fixed, plus the task's ``[verifier] env``."""
    return {
        "PATH": VERIFIER_PATH,
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": GRADER_DIR,
        "PYTHONSTARTUP": "",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_PLUGINS": PLUGIN_MODULE,
        "BASH_ENV": "",
        "ENV": "",
        "LD_PRELOAD": "",
        "LD_LIBRARY_PATH": "",
        **task.config.verifier.env,
    }


def verifier_command(task: Task, end_marker: bytes) -> list[str]:
    """``bash test.sh``, by absolute paths, its output teed (capped) to test-stdout.txt,
    then the end marker on the attestation channel."""
    script = (
        f"/bin/bash {CONTAINER.tests_dir}/test.sh 2>&1 | /usr/bin/tee -p "
        f">(/usr/bin/head -c {MAX_STDOUT_COPY} > {CONTAINER.test_stdout}); "
        "status=${PIPESTATUS[0]}; "
        f"printf '%s\\n' '{end_marker.decode()}' > /proc/1/fd/1; exit $status"
    )
    return ["/bin/bash", "-c", script]


def attest_config(task: Task, key: bytes, writable: tuple[str, ...]) -> bytes:
    services = [s.model_dump(include={"command", "ready", "ready_timeout_sec", "workdir"})
                for s in task.config.verifier.services]
    return json.dumps({"key": key.hex(), "writable": list(writable),
                       "services": services}).encode()


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
    """The signed per-test record shows a complete pytest run with every test passed."""

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
    """reward.json (preferred, as Harbor) or reward.txt. VerifierError if absent or bad."""
    for source in (CONTAINER.reward_json, CONTAINER.reward_text):
        raw = outputs.get(source.name)
        if raw is not None:
            return parse_reward(raw, source), source
    raise VerifierError(f"wrote no reward; it must write {CONTAINER.reward_text}")


def decide(result: VerifierResult, attestation: Attestation) -> VerifierResult:
    """The reward: test.sh's number, kept only where the trusted side backs it."""
    if result.tampered:
        return result.fail("integrity findings: " + "; ".join(result.tampered[:3]))
    if result.failure is not None or result.raw_reward is None:
        return result.fail(result.failure or "no reward")
    untrusted = attestation.trust_blockers()
    if untrusted:
        result.tampered.extend(untrusted)
        return result.fail("attestation: " + untrusted[0])
    result.attested = not attestation.pass_blockers()
    reward = result.raw_reward
    if reward > 0 and not attestation.started:
        return result.fail("attestation: " + attestation.pass_blockers()[0])
    if reward > 0 and not attestation.finished:
        return result.fail("attestation: the attested pytest session never finished")
    if reward >= 1.0 and not result.attested:
        return result.fail("attestation: a reward of 1 without an attested passing run: "
                           + attestation.pass_blockers()[0])
    result.reward = reward
    return result


def all_skipped(tests: list[TestVerdict]) -> bool:
    return bool(tests) and all(t.outcome is Outcome.SKIPPED for t in tests)
