"""Scoring a container the Harbor way, with nothing the agent left able to forge a pass.

1. Read ``docker diff`` before touching anything (:mod:`termgrade.grading.tamper`).
2. Remove ``/tests`` and ``/logs/verifier``; copy in a clean host-side ``tests/``; check
   the copy byte for byte as the engine sees it.
3. Run ``bash /tests/test.sh`` with a clean environment and the task's verifier timeout.
4. Read ``reward.json`` (preferred, as Harbor) or ``reward.txt`` through the engine.
5. Per-test verdicts from ``ctrf.json``, ``junit.xml`` or the pytest summary.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from termgrade.errors import SandboxError, VerifierError
from termgrade.grading.reports import (
    Outcome,
    TestVerdict,
    parse_ctrf,
    parse_junit,
    parse_pytest_summary,
)
from termgrade.grading.tamper import find_tampering
from termgrade.sandbox.base import Sandbox
from termgrade.task import CONTAINER, Task
from termgrade.task.digest import IGNORED_NAMES

MAX_STDOUT_COPY = 1 << 20
"""test.sh's output is also kept in /logs/verifier/test-stdout.txt (Harbor), capped."""
MAX_VERIFIER_OUTPUT = 32 << 20
"""Bytes of /logs/verifier read back (reports, reward, stdout copy)."""
VERIFIER_PATH = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def verifier_env(task: Task) -> dict[str, str]:
    """The environment test.sh sees: fixed, plus the task's ``[verifier] env``."""
    return {
        "PATH": VERIFIER_PATH,
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": "",
        "PYTHONSTARTUP": "",
        "BASH_ENV": "",
        "ENV": "",
        "LD_PRELOAD": "",
        **task.config.verifier.env,
    }


@dataclass
class VerifierResult:
    reward: float | None
    """None when unscored (the verifier crashed, timed out or wrote no reward)."""
    tests: list[TestVerdict] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)
    error: str | None = None
    duration_s: float = 0.0
    """Wall time of test.sh inside the container."""
    output: str = ""
    raw_reward: float | None = None
    """What test.sh wrote, before a tamper finding forced the reward to 0."""

    @property
    def passed(self) -> bool:
        return self.reward is not None and self.reward >= 1.0


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


def _host_manifest(task: Task) -> dict[str, str]:
    root = task.paths.tests_dir
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
        and not IGNORED_NAMES.intersection(p.relative_to(root).parts)
    }


def _read_tests(outputs: dict[str, bytes], output: str) -> list[TestVerdict]:
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


def score(sandbox: Sandbox, task: Task) -> VerifierResult:
    """Grade the container's current state. Raises SandboxError on infrastructure failure."""
    tampered = find_tampering(sandbox.changes())
    reset = sandbox.exec(
        ["bash", "-c", f"rm -rf {CONTAINER.tests_dir} {CONTAINER.verifier_dir} && "
                       f"mkdir -p {CONTAINER.tests_dir} {CONTAINER.verifier_dir}"],
        timeout_s=60, env=verifier_env(task),
    )
    if reset.exit_code != 0:
        raise SandboxError(f"could not reset /tests and /logs/verifier: {reset.output[-500:]}")
    sandbox.copy_in(task.paths.tests_dir, CONTAINER.tests_dir)
    manifest = _host_manifest(task)
    if sandbox.list_files(CONTAINER.tests_dir) != manifest:
        tampered.append("C /tests: copied tests differ from the host's after copy-in")
    leftovers = sandbox.list_files(CONTAINER.verifier_dir)
    if leftovers:
        tampered.append(f"A /logs/verifier: {sorted(leftovers)} survived the reset")
    timeout = task.config.verifier.timeout_sec
    started = time.monotonic()
    run = sandbox.exec(
        ["bash", "-c", f"bash {CONTAINER.tests_dir}/test.sh 2>&1 | "
                       f"tee -p >(head -c {MAX_STDOUT_COPY} > {CONTAINER.test_stdout})"],
        timeout_s=timeout, env=verifier_env(task), workdir=str(CONTAINER.tests_dir),
    )
    result = VerifierResult(reward=None, tampered=sorted(tampered),
                            duration_s=time.monotonic() - started, output=run.output)
    try:
        outputs = sandbox.read_tree(CONTAINER.verifier_dir, max_bytes=MAX_VERIFIER_OUTPUT)
    except SandboxError as exc:
        result.error = f"{task.paths.test_script}: {exc} (keep /logs/verifier small)"
        return result
    result.tests = _read_tests(outputs, run.output)
    after = {k: v for k, v in sandbox.list_files(CONTAINER.tests_dir).items()
             if "__pycache__" not in k}
    if any(after.get(name) != digest for name, digest in manifest.items()):
        result.tampered.append("C /tests: tests changed while the verifier ran")
    if run.timed_out:
        result.error = (f"{task.paths.test_script}: timed out after {timeout:.0f} s "
                        "(raise [verifier] timeout_sec or fix the hang)")
        return result
    source = CONTAINER.reward_json
    raw = outputs.get(source.name)
    if raw is None:
        source = CONTAINER.reward_text
        raw = outputs.get(source.name)
    if raw is None:
        result.error = (f"{task.paths.test_script}: wrote no reward (exit {run.exit_code}); "
                        f"it must write {CONTAINER.reward_text}. "
                        f"Last output: {run.output[-300:]!r}")
        return result
    try:
        result.reward = result.raw_reward = parse_reward(raw, source)
    except VerifierError as exc:
        result.error = f"{task.paths.test_script}: {exc}"
        return result
    failed = [t.name for t in result.tests if t.outcome in (Outcome.FAILED, Outcome.ERROR)]
    if result.reward >= 1.0 and failed:
        result.tampered.append(f"A {source}: reward {result.reward:g} contradicts the report, "
                               f"where {len(failed)} test(s) failed (e.g. {failed[0]})")
    if result.tampered:
        result.reward = 0.0
    return result


def all_skipped(tests: list[TestVerdict]) -> bool:
    return bool(tests) and all(t.outcome is Outcome.SKIPPED for t in tests)
