"""One trial: the agent phase in one container, scoring in another. The trust boundary.

::

    agent container A          host (the grader)                 scoring container B
    ------------------         ------------------------------    -------------------------
    agent runs as root   -->   freeze A; review A's writable -->  created (not started) with
    (any process, any          layer on the host: findings        the image; the verifier's
    write)                     for changes to the verifier's      closure and the tests
                               closure or the grader's paths;     mounted read-only; its
                               move the rest into B's layer;      layer filled on the host,
                               kill A, start B                    then started; test.sh
                               reward = computed from the    <--  every pytest session
                               signed record; test.sh's number    signed, out on an
                               can only lower it                  append-only channel

No process of the agent phase exists in B, and nothing of the agent's that touches the
verifier does either: a cheat that plants a tool, a hook, a daemon or a forged reward in
A has nothing to act on in B. Failure attribution: before the agent phase starts, an
engine failure leaves the trial unscored (retried); after it starts, any failure to score
is the agent's and scores 0, unless the engine itself stopped answering.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from concurrent.futures import Future

from termgrade.agent.kinds import (
    Agent,
    AgentName,
    AgentRun,
    agent_label,
    require_runnable,
    run_agent,
)
from termgrade.sandbox.base import Sandbox
from termgrade.sandbox.diskwatch import DiskWatch
from termgrade.sandbox.errors import ImageBuildError, SandboxError
from termgrade.scoring.kept import WorkStore
from termgrade.scoring.outcome import RunOutcome
from termgrade.scoring.pair.containers import (
    Pair,
    PairSpec,
    make_pair,
    scoring_image,
    task_limits,
    tests_stamp,
)
from termgrade.scoring.pair.warm import WARM
from termgrade.scoring.phases import timed
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review.closure import Closure, find_closure
from termgrade.scoring.review.transfer import TransferSet, derive_transfer_set
from termgrade.scoring.score import NO_LAYERS, score_layer
from termgrade.scoring.verifier.attestable import Attestability, grading_inputs
from termgrade.scoring.verifier.command import image_pythonpath, tool_env_of, verifier_path
from termgrade.scoring.verifier.grader_procs import (
    GraderProcs,
    ImageFacts,
    grader_procs,
    image_facts,
)
from termgrade.scoring.verifier.setup import Scoring
from termgrade.task import Task

__all__ = ["NO_LAYERS", "Phase", "RunOutcome", "Scoring", "make_ahead", "run_pair",
           "run_task", "score_layer", "scoring_setup", "transfer_set_for"]


def transfer_set_for(task: Task, image: str, closure: Closure,
                     reference: ReferenceRecord | None = None,
                     facts: ImageFacts | None = None) -> TransferSet:
    """The task's transfer set on ``image`` (``termgrade run`` prints it); ``facts``:
    ``image``'s, when inspected already."""
    workdir = (facts or image_facts(image)).workdir
    return derive_transfer_set(task, workdir=workdir, reference=reference,
                               view=closure.view)


def scoring_setup(task: Task, image: str) -> tuple[PairSpec, Closure, GraderProcs | None]:
    """The pair's spec, B's closure and the grader's processes for ``task`` on ``image``.
    SandboxError, ImageBuildError or DockerException when the verifier's image or its
    closure cannot be had."""
    spec, closure, procs, _facts = _setup(task, image)
    return spec, closure, procs


def _setup(task: Task, image: str
           ) -> tuple[PairSpec, Closure, GraderProcs | None, ImageFacts]:
    """:func:`scoring_setup`, and the scoring image's facts (one engine inspect: the
    closure and the grader's processes are cached by image id)."""
    score_image = scoring_image(task, image)
    facts = image_facts(score_image)
    path = task.config.verifier.env.get("PATH", verifier_path(facts.env))
    closure = find_closure(score_image, path=path, image_id=facts.id)
    spec = PairSpec(str(task.paths.root), image, score_image, path, tests_stamp(task))
    return spec, closure, grader_procs(closure, path), facts


def make_ahead(task: Task, image: str, key: str | None = None) -> bool:
    """Ask the warm pool (:mod:`termgrade.scoring.pair.warm`) to make the pair of a coming
    trial of ``task`` on ``image`` in the background; False when the pool is full.
    ``key``: the one trial that takes it (its ``warm_key``); default: the next trial of
    the task."""

    def _make() -> Pair:
        spec, closure, procs = scoring_setup(task, image)
        return make_pair(task, spec, closure, procs, f"{task.safe_name}-warm")

    return WARM.make_ahead(key or str(task.paths.root), _make)


def run_task(task: Task, image: str, agent: Agent, *, keep: bool = False,
             reference: ReferenceRecord | None = None,
             attestable: Attestability | None = None,
             warm_key: str | None = None, keep_work: WorkStore | None = None) -> RunOutcome:
    """Run ``agent`` on ``task`` in a fresh container of ``image`` and score it in another.

    ``keep`` leaves both containers for inspection instead of removing them.
    ``keep_work``: keep the carried work there (:mod:`termgrade.scoring.kept`); the outcome's
    ``kept`` says what was kept, for the caller to name in a manifest.
    ``reference``: the reference solution's recorded run (default: the one ``verify``
    recorded for this task's content, if any).
    ``attestable``: the task's attestability (:func:`termgrade.audit.attestable.
    attestability`); default: what its recorded reference run says, else attestable.
    The pair of containers comes from the warm pool when one was made ahead for this
    trial's task (:func:`make_ahead`; under ``warm_key`` when given), else it is made here.
    """
    require_runnable(agent, task)
    label = agent_label(agent)
    reference, attestable = grading_inputs(task, reference, attestable)

    def act(pair: Pair, durations: dict[str, float], started: float,
            scoring: Scoring) -> RunOutcome:
        return _run_started(task, agent, label, pair.agent_box, pair.score_box, durations,
                            started, scoring)

    return run_pair(task, image, label, act, keep=keep, reference=reference,
                    attestable=attestable, warm_key=warm_key,
                    keep_work=keep_work)


Phase = Callable[["Pair", dict[str, float], float, "Scoring"], RunOutcome]
"""What a trial does with its pair of containers once made: grading runs the agent in A
and scores its layer; a regrade scores kept work (:mod:`termgrade.scoring.replay`)."""


def run_pair(task: Task, image: str, label: str, act: Phase, *,
             reference: ReferenceRecord | None, attestable: Attestability,
             keep: bool = False, warm_key: str | None = None,
             keep_work: WorkStore | None = None) -> RunOutcome:
    """A trial's frame: the scoring setup and the transfer set, the pair (warm or made
    here), ``act`` on it, the pair's teardown; the outcome says whether the task is
    attested. ``reference`` and ``attestable``: the task's, as its caller found them
    (None: it has no reference record); see :func:`run_task` for the rest."""
    outcome = _run_task(task, image, label, act, keep=keep, attestable=attestable,
                        reference=reference, warm_key=warm_key, keep_work=keep_work)
    outcome.attested = attestable.attested
    return outcome


def _run_task(task: Task, image: str, label: str, act: Phase, *, keep: bool,
              attestable: Attestability, reference: ReferenceRecord | None,
              warm_key: str | None = None, keep_work: WorkStore | None = None) -> RunOutcome:
    started = time.monotonic()
    durations: dict[str, float] = {}
    from docker.errors import DockerException

    try:
        with timed(durations, "prepare"):
            spec, closure, procs, facts = _setup(task, image)
            transfer = transfer_set_for(task, image, closure, reference,
                                        facts if spec.score_image == image else None)
    except (SandboxError, ImageBuildError, DockerException) as exc:
        return RunOutcome(label, None, error=f"the verifier's image and closure: {exc}",
                          durations={"total": time.monotonic() - started})
    pair: Pair | None = None
    try:
        with timed(durations, "warm_wait"):
            pair = WARM.take(spec, warm_key)
        if pair is None:
            try:
                with timed(durations, "create"):
                    pair = make_pair(task, spec, closure, procs, f"{task.safe_name}-{label}")
            except SandboxError as exc:
                return RunOutcome(label, None, error=str(exc),
                                  durations={"total": time.monotonic() - started})
        # the pair's own closure and grader processes (its broker's socket name): a warm
        # pair was staged with them, not with this call's
        return act(pair, durations, started, Scoring(pair.closure, pair.module, attestable,
                                                     transfer, reference, pair.procs,
                                                     spec.path, keep_work,
                                                     tool_env_of(task, facts.env),
                                                     image_pythonpath(facts.env),
                                                     task_limits(task).storage_mb << 20))
    finally:
        if pair is not None and keep:
            pair.agent_box.halt(kill=True)  # kept stopped, for inspection
        elif pair is not None:
            staged = pair.staged
            _teardown(pair.agent_box, durations)
            # the staged grader, once B (which mounts it) is gone: off the critical path
            _teardown(pair.score_box, durations,
                      then=lambda: shutil.rmtree(staged, ignore_errors=True))
        durations["total"] = time.monotonic() - started


def _run_started(task: Task, agent: Agent, label: str, agent_box: Sandbox, score_box: Sandbox,
                 durations: dict[str, float], started: float, scoring: Scoring) -> RunOutcome:
    layer = agent_box.writable_layer()
    if layer is None or score_box.writable_layer() is None:
        return RunOutcome(label, None, durations=durations, error=NO_LAYERS)
    upper, _lowers = layer
    # From here on the agent has acted: a failure to score is its failure, not unscored.
    watch = DiskWatch(agent_box, upper, scoring.storage_bytes)
    agent_run = AgentRun(result=None)
    try:
        agent_run = run_agent(agent, agent_box, task)
    except SandboxError as exc:
        agent_run = AgentRun(result=None, error=f"agent phase: {exc}")
    finally:
        with timed(durations, "freeze"):
            watch.stop()
            agent_box.halt()
    durations["agent"] = agent_run.duration_s
    if agent_run.infrastructure_error is not None:
        return RunOutcome(label, None, durations=durations, agent_run=agent_run,
                          error=agent_run.infrastructure_error)
    outcome = score_layer(task, layer, agent_box.engine_paths(), score_box, scoring,
                          durations, label=label, exceeded=watch.check_now,
                          engine_files=agent_box.engine_files_changed(),
                          # by identity: a script agent or a model named "oracle" is judged
                          reference_run=agent is AgentName.ORACLE)
    outcome.agent_run, outcome.agent_error = agent_run, agent_run.error
    return outcome


def _teardown(box: Sandbox, durations: dict[str, float],
              then: Callable[[], object] | None = None) -> None:
    """Remove ``box`` in the background, then call ``then`` (there too); the seconds land
    in ``durations["teardown"]``. The interpreter waits for the removals at exit."""
    began = time.monotonic()

    def _done(_future: object) -> None:
        if then is not None:
            then()
        durations["teardown"] = max(durations.get("teardown", 0.0), time.monotonic() - began)

    pending = box.close_later()
    if isinstance(pending, Future):
        pending.add_done_callback(_done)
    else:
        _done(None)
