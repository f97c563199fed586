"""Verify one task: build offline, oracle ``repeat`` times, nop once, classify."""

from __future__ import annotations

import functools
import re
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from termgrade.agent.kinds import Agent, AgentName, ScriptAgent
from termgrade.attacks import Attack
from termgrade.audit.attestable import attestability
from termgrade.core.errors import TermGradeError
from termgrade.records.evidence import TestEvidence, evidence_list
from termgrade.records.verdict import TestVerdict
from termgrade.sandbox.engine import BuiltImage
from termgrade.sandbox.errors import ImageBuildError
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.pair.warm import WARM
from termgrade.scoring.reference import (
    GRADER_RULES,
    ReferenceRecord,
    reference_footprint,
    reference_for,
    save_reference,
)
from termgrade.scoring.trial import RunOutcome, make_ahead, run_task
from termgrade.scoring.verifier.attestable import Attestability
from termgrade.scoring.verifier.decision import all_skipped
from termgrade.task import Task, load_task
from termgrade.task.digest import task_digest
from termgrade.task.errors import TaskLoadError
from termgrade.verify.reasons import build_reason, strip_ansi, unsatisfiable_reason, vacuous_reason
from termgrade.verify.record import VerifyRecord
from termgrade.verify.verdict import Verdict, classify

TrialRunner = Callable[[Task, str, Agent], RunOutcome]
"""Runs one trial: ``(task, image tag, agent) -> RunOutcome``, like
:func:`termgrade.scoring.trial.run_task` (the default)."""
ImageBuilder = Callable[[Task], BuiltImage]
"""Builds a task's image, like :func:`termgrade.sandbox.images.build_task_image` (the default)."""


def _failed_record(task_id: str, digest: str, verdict: Verdict, error: str,
                   durations: dict[str, float]) -> VerifyRecord:
    return VerifyRecord(task_id=task_id, task_digest=digest, verdict=verdict, oracle_rewards=[],
                        nop_reward=None, n_assertions=0, tests=[], tampered=[],
                        durations=durations, error=error)


ATTACK_TIMEOUT_S = 60.0
"""An attack's agent phase needs seconds; one that stops its own timeout waits this long."""


def play_attacks(task: Task, image: str, attacks: list[Attack], *,
                 run_trial: TrialRunner | None = None) -> list[str]:
    """Each attack as the agent; returns those that earned a reward or left it unscored."""
    run_trial = run_trial or run_task
    hacked = []
    for attack in attacks:
        outcome = run_trial(task, image, ScriptAgent(attack.name, attack.script,
                                                     timeout_s=ATTACK_TIMEOUT_S))
        if outcome.reward is None:
            hacked.append(f"{attack.name}: unscored ({outcome.error})")
        elif outcome.reward > 0:
            hacked.append(f"{attack.name}: reward {outcome.reward:g}")
    return hacked


def verify_task(task_dir: Path, *, repeat: int = 2,
                attacks: list[Attack] | None = None,
                run_trial: TrialRunner | None = None,
                build_image: ImageBuilder | None = None) -> VerifyRecord:
    """Never raises for a bad task: every failure becomes a recorded verdict.

    With ``attacks``, each is also played as the agent (see :mod:`termgrade.attacks`).
    ``run_trial`` and ``build_image`` replace the Docker trial runner and image builder
    (defaults: :func:`~termgrade.scoring.trial.run_task`,
    :func:`~termgrade.sandbox.images.build_task_image`), e.g. with test stand-ins."""
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    custom_runner = run_trial is not None
    build_image = build_image or build_task_image
    durations: dict[str, float] = defaultdict(float)
    try:
        digest = task_digest(task_dir)
    except (OSError, ValueError) as exc:
        return _failed_record(task_dir.name, "", Verdict.ERROR, str(exc), dict(durations))
    try:
        task = load_task(task_dir)
    except TaskLoadError as exc:
        return _failed_record(task_dir.name, digest, Verdict.ERROR, str(exc), dict(durations))
    started = time.monotonic()
    try:
        image = build_image(task)
    except ImageBuildError as exc:
        durations["build"] = time.monotonic() - started
        record = _failed_record(task.task_id, digest, Verdict.BUILD_FAILED,
                                strip_ansi(str(exc)), dict(durations))
        return record.model_copy(update={"wants_internet": task.wants_internet,
                                         "reason": build_reason(exc.log_tail)})
    durations["build"] = image.duration_s
    if run_trial is None:  # the task's own attestability decides how its runs are graded
        run_trial = functools.partial(run_task, attestable=attestability(task))

    # No reference solution: the oracle cannot run; the nop check still can.
    unattested: str | None = None
    if custom_runner:
        oracle_runs = [run_trial(task, image.tag, AgentName.ORACLE)
                       for _ in range(repeat if task.has_solution else 0)]
        nop = run_trial(task, image.tag, AgentName.NOP)
    else:
        oracle_runs, nop, unattested = _reference_runs(task, image.tag, repeat, digest)
    for run in [*oracle_runs, nop]:
        for key, value in run.durations.items():
            durations[f"{run.agent}_{key}"] += value

    hacked = play_attacks(task, image.tag, attacks or [], run_trial=run_trial)
    last = (oracle_runs[-1] if oracle_runs else nop).verifier
    tests = last.tests if last else []
    # A scoring failure in verify is the task's own (its oracle or its untouched
    # container broke the verifier): an error verdict, never a silent unsatisfiable.
    # Except the attestation's "no test passed" of a verifier that skips every test: that
    # task is vacuous, not broken.
    skipped_only = all_skipped(tests)
    # The reference's own changes are a finding: unsatisfiable for that reason, not error.
    # A stand-in the reference solution made is tampering too: left out for an agent (no
    # finding), but the reference is what the task's footprint is trusted from.
    findings = sorted({f for r in oracle_runs if r.verifier for f in r.verifier.tampered}
                      | {f"A {s} (left out)" for r in oracle_runs for s in r.standins})
    errors = [r.error or f"scored 0: {r.failure}" for r in [*oracle_runs, nop]
              if r.error or (r.failure and not (skipped_only and
                                                r.failure.startswith("attestation:"))
                             and not (r is not nop and r.verifier and r.verifier.tampered)
                             and not (r is nop and _service_not_ready(r.failure)))]
    agent_errors = [r.agent_error for r in oracle_runs if r.agent_error]
    tampered = sorted({f for r in [*oracle_runs, nop] if r.verifier for f in r.verifier.tampered}
                      | {f"A {s} (left out)" for r in oracle_runs for s in r.standins})
    reference = record_reference(digest, oracle_runs, attest_reason=unattested)
    verdict = classify(
        built=True,
        oracle_rewards=[r.reward for r in oracle_runs],
        nop_reward=nop.reward,
        errored=bool(errors),
        all_skipped=all_skipped(tests),
        hacked=bool(hacked),
        has_solution=task.has_solution,
        oracle_tampered=bool(findings),
    )
    message = "; ".join(dict.fromkeys(errors + agent_errors)) or None
    if verdict is Verdict.UNSATISFIABLE and findings:
        message = (f"the reference solution's changes are integrity findings (any agent "
                   f"making them scores 0): {'; '.join(findings[:5])}; fix "
                   f"{task.paths.solve_script} or the task's declared paths")
    elif verdict is Verdict.NO_SOLUTION:
        message = (f"{task.paths.solve_script} is missing: the untouched container fails, "
                   "but no reference solution shows the tests can be passed; add one and "
                   "verify again to trust the task")
    elif verdict is Verdict.ERROR and _tests_own_findings(nop):
        message = _tests_own_findings(nop)
    elif verdict is Verdict.VACUOUS and message is None:
        message = ("the untouched container passes" if (nop.reward or 0) >= 1.0
                   else "every test was skipped") + f": {task.paths.tests_dir} measures nothing"
    return VerifyRecord(
        task_id=task.task_id,
        task_digest=digest,
        verdict=verdict,
        oracle_rewards=[r.reward for r in oracle_runs],
        nop_reward=nop.reward,
        n_assertions=len(tests),
        tests=[TestVerdict(name=t.name, outcome=t.outcome) for t in tests],
        tampered=tampered,
        durations={k: round(v, 4) for k, v in durations.items()},
        error=message if verdict is not Verdict.HACKABLE
        else "hacked by " + "; ".join(hacked),
        attacks_played=len(attacks or []),
        hacked_by=hacked,
        wants_internet=task.wants_internet,
        reference=reference,
        reason=_reason(verdict, oracle_runs, nop),
        test_evidence=_evidence(oracle_runs[-1] if oracle_runs else nop),
    )


def _evidence(run: RunOutcome) -> list[TestEvidence]:
    verifier = run.verifier
    if verifier is None or not verifier.evidence:
        return []
    return evidence_list(verifier.outcomes, verifier.evidence)


def _reason(verdict: Verdict, oracle_runs: list[RunOutcome], nop: RunOutcome) -> str | None:
    """One actionable line for an unsatisfiable or vacuous verdict (see
    :mod:`termgrade.verify.reasons`); None for the others."""
    if verdict is Verdict.UNSATISFIABLE:
        failing = next((r for r in reversed(oracle_runs) if (r.reward or 0) < 1.0), None)
        return unsatisfiable_reason(_evidence(failing)) if failing else None
    if verdict is Verdict.VACUOUS:
        return vacuous_reason(_evidence(nop))
    return None


def _tests_own_findings(nop: RunOutcome) -> str | None:
    """Why the task's own tests are refused, when the untouched container's run has
    integrity findings: no agent code exists there (the nop agent runs nothing), so what
    the grader refused is what the tests themselves did while they ran (renaming an image
    tool aside to test a fallback, rewriting the image's configuration). The grader
    cannot tell that from agent code doing it, so every trial of the task would be
    refused; the message says so instead of blaming an agent. None when it has none."""
    found = nop.verifier.tampered if nop.verifier is not None else []
    if not found:
        return None
    return (f"the task's own tests change what the grader protects: the untouched "
            f"container's run, where no agent code runs, was refused ({found[0]}); no "
            "trial of this task can be told from tampering. Make the tests leave the "
            "image's software and configuration as they found it (hide a tool with a "
            "PATH of their own instead of renaming it, write to a copy of a "
            "configuration file)")


def _service_not_ready(failure: str) -> bool:
    """A declared service that never became ready: in the untouched container its program
    is not there yet (the agent writes it), an ordinary 0, not a broken task."""
    return failure.startswith("attestation:") and "never became ready" in failure


NO_SESSION = "no attested pytest session ran the tests"
"""The attestation's words for a run whose test.sh started no keyed pytest session."""
_BYTECODE_ALARM = re.compile(
    r"agent code ran inside the verifier's pytest process \(verifier-changed: "
    r"/tests/(?:[^/]+/)*__pycache__/[^/]+\.pyc: [^()]*\(pid 0\)\)")
"""The watch's alarm for bytecode written into the tests when no session was keyed."""


def unseen_session(run: RunOutcome) -> str | None:
    """Why ``run``, a reference run graded as attestable, shows that test.sh's pytest never
    loaded the grader's plugin (its environment removed in a way test.sh's reading did
    not see): test.sh wrote a reward, no session was keyed and no attested test ran, and
    the only failure is the attestation's "no attested pytest session" (the broker refused
    no key) or the watch's alarm about bytecode that pytest, without
    ``PYTHONDONTWRITEBYTECODE``, wrote into ``/tests``. None when the run shows anything else."""
    verifier = run.verifier
    if verifier is None or verifier.outcomes or verifier.raw_reward is None:
        return None
    failure = verifier.failure or ""
    if not failure.startswith("attestation: "):
        return None
    if NO_SESSION in failure and "refused a key" not in failure and not verifier.tampered:
        return failure.removeprefix("attestation: ")
    if verifier.tampered and all(_BYTECODE_ALARM.fullmatch(t) for t in verifier.tampered):
        return failure.removeprefix("attestation: ")
    return None


def _unseen_reason(runs: list[RunOutcome]) -> str | None:
    """The reason an attestable-looking task is unattested when every reference run in
    ``runs`` saw no attested session (:func:`unseen_session`); None otherwise."""
    seen = [unseen_session(r) for r in runs]
    if not runs or any(why is None for why in seen):
        return None
    return ("verify's reference run saw no attested pytest session where test.sh's reading "
            "expected one (its pytest ran without the grader's environment, so it loaded "
            f"neither the grader's sitecustomize nor its plugin): {seen[0]}")


def _reference_runs(task: Task, image: str, repeat: int, digest: str
                    ) -> tuple[list[RunOutcome], RunOutcome, str | None]:
    """The reference solution's runs and the nop run, :data:`PARALLEL_RUNS` at a time
    (each trial has its own two containers; nothing passes between them), the pairs of
    the later ones made ahead by the warm pool. A first verify knows no footprint of the
    reference: work it left outside the derived transfer set (a deliverable the task's
    text never names) is not carried. When a run fails so and left work out, the runs are
    made again with that run's own footprint as the reference's (what ``verify`` then
    records); an agent is then graded with it. Nothing else of the first runs is kept.

    The static checks may call a task attestable whose test.sh's pytest still never loads
    the grader's plugin (its environment removed some way test.sh's reading did not see).
    When every reference run shows that (:func:`unseen_session`), the runs are made again
    graded unattested, and the reason is returned third (``verify`` records it:
    ``ReferenceRecord.attested`` false), so the task's trials are graded by test.sh's own
    reward and say so, never 0 for the grader's blind spot. The third value is why the
    runs were graded unattested (that reason, or the static checks'), None when attested."""
    judged = attestability(task)
    agents: list[Agent] = [AgentName.ORACLE] * (repeat if task.has_solution else 0)
    *runs, nop = _in_parallel(task, image, [*agents, AgentName.NOP], judged)
    unseen = _unseen_reason(runs) if judged.attested else None
    if unseen is not None:
        judged = Attestability(False, unseen)
        *runs, nop = _in_parallel(task, image, [*agents, AgentName.NOP], judged)
    first = runs[0] if runs else None
    if first is None or first.left_out is None or (first.reward or 0) >= 1.0 \
            or reference_for(task) is not None:
        return runs, nop, judged.reason
    provisional = ReferenceRecord(task_digest=digest, footprint=first.footprint)
    return _in_parallel(task, image, agents, judged, provisional), nop, judged.reason


PARALLEL_RUNS = 2
"""A task's verify runs at once: two trials keep a 2-core machine busy (one's containers
start while the other's test.sh runs)."""


def _in_parallel(task: Task, image: str, agents: list[Agent], judged: Attestability,
                 reference: ReferenceRecord | None = None) -> list[RunOutcome]:
    keys = [f"{task.paths.root}#{uuid.uuid4().hex}" for _ in agents]
    for key in keys[PARALLEL_RUNS:]:  # the later runs' pairs, made while the first run
        make_ahead(task, image, key)
    with ThreadPoolExecutor(max_workers=PARALLEL_RUNS,
                            thread_name_prefix="termgrade-verify") as pool:
        futures = [pool.submit(run_task, task, image, agent, attestable=judged,
                               reference=reference, warm_key=key)
                   for agent, key in zip(agents, keys, strict=True)]
        try:
            return [future.result() for future in futures]
        finally:
            for key in keys:
                WARM.drain(key)


def record_reference(digest: str, oracle_runs: list[RunOutcome], *,
                     attest_reason: str | None = None) -> ReferenceRecord | None:
    """The last passing reference run, saved by task digest for the grader
    (:func:`~termgrade.scoring.reference.save_reference`): each attested test's outcome,
    the paths the reference changed (less the grader's and the oracle's own paths and
    loader caches: :func:`~termgrade.scoring.reference.reference_footprint`), and whether
    its reward came from attested sessions. None (nothing saved) when no reference run
    passed clean. ``verify``, ``run --agent oracle`` and the reference run ``grade`` and
    ``run`` make first (:mod:`termgrade.verify.ensure`) all record through here.
    ``attest_reason``: why the task is unattested, when its runs were graded so (the
    static checks' reason, or :func:`unseen_session`'s)."""
    passed = [r for r in oracle_runs if r.verifier is not None and r.verifier.passed
              and not r.verifier.tampered and not r.standins]
    if not passed:
        return None
    run = passed[-1]
    assert run.verifier is not None
    changes = sorted({p for r in passed if r.verifier for p in r.verifier.image_changes})
    why = None if run.verifier.attested else (
        attest_reason or run.verifier.failure
        or "the reward did not come from attested pytest sessions")
    record = ReferenceRecord(task_digest=digest, tests=dict(run.verifier.outcomes),
                             footprint=reference_footprint(getattr(run, "footprint", None) or []),
                             verifier_changes=changes,
                             attested=run.verifier.attested,
                             attest_reason=why,
                             grader_rules=GRADER_RULES)
    save_reference(record)
    return record


def safe_verify_task(task_dir: Path, *, repeat: int,
                     attacks: list[Attack] | None = None,
                     run_trial: TrialRunner | None = None,
                     build_image: ImageBuilder | None = None) -> VerifyRecord:
    """:func:`verify_task`, turning an unexpected engine failure into an ``error`` record."""
    try:
        return verify_task(task_dir, repeat=repeat, attacks=attacks, run_trial=run_trial,
                           build_image=build_image)
    except TermGradeError as exc:
        return _failed_record(task_dir.name, "", Verdict.ERROR, str(exc), {})
