"""Test stand-ins for the trial runner and the image builder, so ``verify`` runs without Docker.

:class:`ScriptedTrials` runs nothing: called as ``run_trial(task, image, agent)`` (the
signature of :func:`termgrade.scoring.trial.run_task`), it returns the
:class:`~termgrade.scoring.trial.RunOutcome` (with its
:class:`~termgrade.scoring.verifier.result.VerifierResult`) scripted for that task and agent, or
raises what was scripted. :class:`FakeImages` stands in for
:func:`termgrade.sandbox.images.build_task_image`: it builds nothing and returns a made-up tag, or
raises the scripted :class:`~termgrade.sandbox.errors.ImageBuildError`. Pass them to
``verify_task`` / ``verify_tasks`` as ``run_trial=`` and ``build_image=``.

What they cannot tell: anything about real containers, images, test.sh, the attestation
or the integrity review. The outcomes are what those would report, written by hand; the
Docker tests (``tests/verify/test_verify_verdicts.py``, ``tests/test_grading_*.py``) check that
the real grader reports them.

A script maps ``task_id -> {agent label: steps}``. The agent label is ``oracle``, ``nop``
or an attack's name; the key :data:`ATTACKS` matches any attack the task's script does not
name. ``steps`` is one :class:`Step` or an exception to raise (an instance:
``KeyboardInterrupt()``) for every call, or a list of them: the n-th call takes the n-th,
the last repeats.
A task or agent the script does not name behaves as a verified task: the oracle passes,
the untouched container and every attack fail.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from termgrade.agent.kinds import Agent, agent_label
from termgrade.records.verdict import Outcome, TestVerdict
from termgrade.sandbox.engine import BuiltImage
from termgrade.sandbox.errors import ImageBuildError
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.task import Task
from termgrade.verify import Journal

ATTACKS = "attacks"
"""Script key: every attack a task's script does not name."""

TESTS = ("test_output_exists", "test_output_content")
"""The two tests of ``tests/conftest.py``'s fixture task."""

DURATIONS = {"start": 0.001, "agent": 0.002, "snapshot": 0.001, "verify": 0.003, "total": 0.007}


@dataclass(frozen=True)
class Step:
    """One scripted trial outcome; :meth:`outcome` makes the record for an agent label."""

    reward: float | None
    """None: unscored (an engine failure, :attr:`error`)."""
    outcomes: tuple[Outcome, ...] = (Outcome.PASSED, Outcome.PASSED)
    """Per-test outcomes of the verifier's report, in :data:`TESTS` order."""
    failure: str | None = None
    """A scored failure (the trial scores 0 for it)."""
    error: str | None = None
    """An engine failure (the trial is unscored)."""
    tampered: tuple[str, ...] = ()
    """Integrity findings (each forces 0)."""
    agent_error: str | None = None

    def outcome(self, agent: str) -> RunOutcome:
        if self.reward is None:
            return RunOutcome(agent=agent, verifier=None, agent_error=self.agent_error,
                              error=self.error or "scripted engine failure",
                              durations={"start": DURATIONS["start"]})
        tests = [TestVerdict(name=name, outcome=outcome)
                 for name, outcome in zip(TESTS, self.outcomes, strict=False)]
        verifier = VerifierResult(
            reward=self.reward, tests=tests, tampered=list(self.tampered),
            failure=self.failure, duration_s=DURATIONS["verify"],
            raw_reward=self.reward if self.failure is None else None,
            attested=self.reward >= 1.0)
        return RunOutcome(agent=agent, verifier=verifier, agent_error=self.agent_error,
                          durations=dict(DURATIONS))


PASS = Step(reward=1.0)
"""Every test passed, attested: reward 1."""
FAIL = Step(reward=0.0, outcomes=(Outcome.PASSED, Outcome.FAILED))
"""One test failed: reward 0."""
SKIPPED = Step(reward=0.0, outcomes=(Outcome.SKIPPED, Outcome.SKIPPED),
               failure="attestation: no test passed")
"""Every test skipped: pytest exits 0 but the attestation gives no reward."""


def unscored(error: str = "docker: the engine stopped answering") -> Step:
    """An engine failure: no reward at all (the trial is retried, never counted)."""
    return Step(reward=None, error=error)


def scored_failure(reason: str = "verifier: /tests/test.sh wrote no reward "
                                 "(/logs/verifier/reward.txt)") -> Step:
    """Scoring failed after the agent phase began: 0, with the reason."""
    return Step(reward=0.0, outcomes=(), failure=reason)


def tampered(*paths: str) -> Step:
    """The integrity review found changes outside the writable paths: 0."""
    found = tuple(f"M {p}" for p in paths or ("/usr/bin/python3",))
    return Step(reward=0.0, tampered=found, failure="integrity findings: " + "; ".join(found))


Steps = Step | BaseException | Sequence[Step | BaseException]
Script = Mapping[str, Mapping[str, Steps]]
DEFAULT: dict[str, Steps] = {"oracle": PASS, "nop": FAIL, ATTACKS: FAIL}


@dataclass
class Call:
    task_id: str
    agent: str
    image: str


@dataclass
class ScriptedTrials:
    """A scripted stand-in for :func:`termgrade.scoring.trial.run_task`; it runs nothing."""

    script: Script = field(default_factory=dict)
    on_call: Callable[[Call], None] | None = None
    """Called before each trial is answered (e.g. to look at the journal mid-run)."""
    calls: list[Call] = field(default_factory=list)
    _counts: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _steps(self, task_id: str, label: str, is_attack: bool) -> Steps:
        task = self.script.get(task_id, {})
        for where in (task, DEFAULT):
            if label in where:
                return where[label]
            if is_attack and ATTACKS in where:
                return where[ATTACKS]
        raise KeyError(f"no scripted outcome for {task_id}/{label}")

    def __call__(self, task: Task, image: str, agent: Agent, *, keep: bool = False,
                 reference: object = None, attestable: object = None,
                 warm_key: str | None = None) -> RunOutcome:
        """``run_task``'s signature; the keyword arguments change nothing here."""
        label = agent_label(agent)
        call = Call(task.task_id, label, image)
        with self._lock:
            self.calls.append(call)
            n = self._counts[(task.task_id, label)]
            self._counts[(task.task_id, label)] = n + 1
        if self.on_call is not None:
            self.on_call(call)
        steps = self._steps(task.task_id, label, label not in ("oracle", "nop"))
        step = steps if isinstance(steps, Step | BaseException) else steps[min(n, len(steps) - 1)]
        if isinstance(step, BaseException):
            raise step
        return step.outcome(label)

    def tasks_run(self) -> list[str]:
        """Task ids in the order their first trial was asked for."""
        return list(dict.fromkeys(c.task_id for c in self.calls))

    def agents_of(self, task_id: str) -> list[str]:
        return [c.agent for c in self.calls if c.task_id == task_id]


@dataclass
class FakeImages:
    """A stand-in for :func:`termgrade.sandbox.images.build_task_image`; it builds nothing.

    ``fail`` maps a task id to the build log tail of a scripted build failure; ``built``
    lists the task ids it was asked for, in order."""

    fail: Mapping[str, str] = field(default_factory=dict)
    built: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, task: Task) -> BuiltImage:
        with self._lock:
            self.built.append(task.task_id)
        tag = f"termgrade/task-{task.task_id}:fake"
        if task.task_id in self.fail:
            raise ImageBuildError(tag, self.fail[task.task_id],
                                  fix=f"{task.paths.dockerfile} must build with no network")
        image_id = "sha256:" + hashlib.sha256(task.task_id.encode()).hexdigest()
        return BuiltImage(tag=tag, image_id=image_id, duration_s=0.001)


def journal_ids(journal: Journal) -> list[str]:
    """The task ids a verify journal holds, in the order they were appended."""
    return [json.loads(line)["task_id"] for line in journal.path.read_text().splitlines()]
