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

import posixpath
import shutil
import stat
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from termgrade.agent.kinds import Agent, AgentRun, agent_label, require_runnable, run_agent
from termgrade.records.verdict import TestVerdict
from termgrade.sandbox.base import ExecResult, Sandbox
from termgrade.sandbox.channel import LineChannel
from termgrade.sandbox.diskwatch import DiskWatch
from termgrade.sandbox.errors import ImageBuildError, SandboxError
from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring import attestation as attest
from termgrade.scoring.attestable import Attestability, from_reference
from termgrade.scoring.carry import carry_work
from termgrade.scoring.closure import PYTHON_NAME, VERIFIER_PATH, Closure, find_closure
from termgrade.scoring.errors import VerifierError
from termgrade.scoring.grader_procs import (
    GraderProcs,
    grader_procs,
    image_config,
)
from termgrade.scoring.integrity import LayerReview, review_layer
from termgrade.scoring.kept import KeptLayer, WorkStore, snapshot
from termgrade.scoring.loader import cache_digest, needs_ldconfig, rebuild_cache
from termgrade.scoring.pair import Pair, PairSpec, make_pair, tests_stamp
from termgrade.scoring.phases import timed
from termgrade.scoring.policy import GRADER_RUN_DIR, GradingPolicy
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.scoring.scoring_box import scoring_image, task_limits
from termgrade.scoring.standins import is_shared_object
from termgrade.scoring.transfer import TransferSet, derive_transfer_set, image_resolver
from termgrade.scoring.verifier import (
    MAX_VERIFIER_OUTPUT,
    VerifierResult,
    attest_config,
    decide,
    decide_unattested,
    install_roots,
    read_reward,
    read_tests,
    read_weights,
    verifier_command,
    verifier_env,
    verifier_path,
)
from termgrade.scoring.warm import WARM
from termgrade.task import CONTAINER, Task


@dataclass
class RunOutcome:
    agent: str
    verifier: VerifierResult | None
    """None when unscored (an engine failure)."""
    agent_error: str | None = None
    error: str | None = None
    """Engine failure: the run is unscored and retried, never counted as 0."""
    durations: dict[str, float] = field(default_factory=dict)
    """Seconds per phase (:mod:`termgrade.scoring.phases`: ``prepare``, ``create``,
    ``agent``, ``freeze``, ``review``, ``transfer``, ``start_b``, ``broker``, ``verify``
    (test.sh), ``decision``), ``total`` (until the reward is known) and, once the
    background removal ends, ``teardown``."""
    agent_run: AgentRun | None = None
    """What the agent phase left: a model agent's transcript is here."""
    transfer: TransferSet | None = None
    """The task's transfer set: the only part of the agent's work the verifier sees."""
    footprint: list[str] = field(default_factory=list)
    """The top-most paths the agent changed (``verify`` records the reference's)."""
    left_out: str | None = None
    """What the agent changed outside the transfer set (not carried), in one line."""
    attested: bool = True
    """The task is attestable: the reward came from the signed record (0 on any alarm).
    False: an unattestable task, graded by ``test.sh``'s own reward."""
    kept: KeptLayer | None = None
    """The carried work as kept (``keep_work``); None when not asked or never carried."""

    @property
    def reward(self) -> float | None:
        return self.verifier.reward if self.verifier else None

    @property
    def failure(self) -> str | None:
        return self.verifier.failure if self.verifier else None


def _engine_alive() -> bool:
    from termgrade.sandbox.engine import docker_client

    try:
        return bool(docker_client().ping())
    except Exception:
        return False


def _closure(image: str, task: Task, path: str = VERIFIER_PATH) -> Closure:
    return find_closure(image, path=task.config.verifier.env.get("PATH", path))


def transfer_set_for(task: Task, image: str, closure: Closure,
                     reference: ReferenceRecord | None = None) -> TransferSet:
    """The task's transfer set on ``image`` (``termgrade run`` prints it)."""
    return derive_transfer_set(task, workdir=image_config(image)[1], reference=reference,
                               resolve=image_resolver(closure.view))


def scoring_setup(task: Task, image: str) -> tuple[PairSpec, Closure, GraderProcs | None]:
    """The pair's spec, B's closure and the grader's processes for ``task`` on ``image``.
    SandboxError, ImageBuildError or DockerException when the verifier's image or its
    closure cannot be had."""
    score_image = scoring_image(task, image)
    image_env, _workdir = image_config(score_image)
    path = task.config.verifier.env.get("PATH", verifier_path(image_env))
    closure = _closure(score_image, task, path)
    spec = PairSpec(str(task.paths.root), image, score_image, path, tests_stamp(task))
    return spec, closure, grader_procs(closure, path)


def make_ahead(task: Task, image: str, key: str | None = None) -> bool:
    """Ask the warm pool (:mod:`termgrade.scoring.warm`) to make the pair of a coming
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

    def act(pair: Pair, durations: dict[str, float], started: float,
            scoring: Scoring) -> RunOutcome:
        return _run_started(task, agent, label, pair.agent_box, pair.score_box, durations,
                            started, scoring)

    return run_pair(task, image, label, act, keep=keep, reference=reference,
                    attestable=attestable, warm_key=warm_key, keep_work=keep_work)


Phase = Callable[["Pair", dict[str, float], float, "Scoring"], RunOutcome]
"""What a trial does with its pair of containers once made: grading runs the agent in A
and scores its layer; a regrade scores kept work (:mod:`termgrade.scoring.replay`)."""


def run_pair(task: Task, image: str, label: str, act: Phase, *, keep: bool = False,
             reference: ReferenceRecord | None = None,
             attestable: Attestability | None = None, warm_key: str | None = None,
             keep_work: WorkStore | None = None) -> RunOutcome:
    """A trial's frame: the scoring setup and the transfer set, the pair (warm or made
    here), ``act`` on it, the pair's teardown; the outcome says whether the task is
    attested. See :func:`run_task` for the arguments."""
    if reference is None:
        reference = reference_for(task)
    attestable = attestable or from_reference(reference)
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
            spec, closure, procs = scoring_setup(task, image)
            transfer = transfer_set_for(task, image, closure, reference)
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
                                                     spec.path, keep_work))
    finally:
        if pair is not None and keep:
            pair.agent_box.halt(kill=True)  # kept stopped, for inspection
        elif pair is not None:
            for box in (pair.agent_box, pair.score_box):
                _teardown(box, durations)
            # a kept scoring container still mounts the staged tests
            shutil.rmtree(pair.staged, ignore_errors=True)
        durations["total"] = time.monotonic() - started


@dataclass(frozen=True)
class Scoring:
    """What the scoring container runs the verifier with."""

    closure: Closure
    plugin: str
    """This trial's module name of the attestation plugin."""
    attestable: Attestability
    """The task's attestability: which decision rule grades the trial."""
    transfer: TransferSet | None = None
    """What of the agent's work is carried (None: everything outside the closure)."""
    reference: ReferenceRecord | None = None
    """The reference solution's recorded run (the decision rule's yardstick), if any."""
    procs: GraderProcs | None = None
    """What the grader runs in B, by the image's absolute paths; None without a Python."""
    path: str = VERIFIER_PATH
    """test.sh's PATH: the image's, then the grader's fixed directories."""
    keep_work: WorkStore | None = None
    """Where the carried work is kept (``grade --keep-work``); None: not kept."""

    @property
    def python(self) -> str | None:
        """The closure's interpreter that runs the broker (any of the image's)."""
        if self.procs is not None:
            return self.procs.python
        found = [f for f in self.closure.files if PYTHON_NAME.match(posixpath.basename(f))]
        return found[0] if found else None


def _run_started(task: Task, agent: Agent, label: str, agent_box: Sandbox, score_box: Sandbox,
                 durations: dict[str, float], started: float, scoring: Scoring) -> RunOutcome:
    limit = task_limits(task).storage_mb << 20
    layer = agent_box.writable_layer()
    if layer is None or score_box.writable_layer() is None:
        return RunOutcome(label, None, durations=durations, error=NO_LAYERS)
    upper, _lowers = layer
    # From here on the agent has acted: a failure to score is its failure, not unscored.
    watch = DiskWatch(agent_box, upper, limit)
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
                          error=f"the model endpoint: {agent_run.infrastructure_error}")
    outcome = score_layer(task, layer, agent_box.engine_paths(), score_box, scoring,
                          durations, label=label, exceeded=watch.check_now)
    outcome.agent_run, outcome.agent_error = agent_run, agent_run.error
    return outcome


NO_LAYERS = ("the engine's writable layers are not readable on this host (TermGrade grades "
             "on a local Docker engine with the overlay2 storage driver, as root)")


def score_layer(task: Task, agent_layer: tuple[str, list[str]], engine_paths: tuple[str, ...],
                score_box: Sandbox, scoring: Scoring, durations: dict[str, float], *,
                label: str, exceeded: Callable[[], int | None] | None = None) -> RunOutcome:
    """Score the agent's work in ``agent_layer`` (an overlay upper directory and the image's
    layers below it, nothing of it running): review it, carry what the transfer set lets
    through into the created, never started ``score_box``, keep it (``scoring.keep_work``),
    start B and run the verifier. Grading calls it on the frozen agent container's layer
    (``exceeded``: its disk watch's last measure); a regrade on kept work rebuilt on the
    host (:mod:`termgrade.scoring.replay`). Every failure to score is the agent's, unless
    the engine itself stopped answering (unscored)."""
    policy = GradingPolicy.for_task(task, scoring.closure.dirs + scoring.closure.files,
                                    scoring.path)
    limit = task_limits(task).storage_mb << 20
    upper, lowers = agent_layer
    result = VerifierResult(reward=None, attested=scoring.attestable.attested)
    seen = RunOutcome(label, None, transfer=scoring.transfer)
    try:
        with timed(durations, "freeze"):
            over = exceeded() if exceeded is not None else None
        if over is not None:
            result.fail(f"the agent wrote {over >> 20} MiB to the container's disk, over "
                        f"its {limit >> 20} MiB limit ([environment] storage_mb)")
        else:
            with timed(durations, "review"):
                review = review_layer(walk_upper(upper), LowerView(lowers), policy,
                                      grader_paths=engine_paths,
                                      transfer=scoring.transfer)
            result.tampered = review.all_findings()
            seen.footprint, seen.left_out = review.footprint, review.left_out_summary()
            if review.carried_bytes > limit:  # a sparse file counts at its full length
                result.fail(f"the agent's files add up to {review.carried_bytes >> 20} MiB, "
                            f"over the {limit >> 20} MiB disk limit ([environment] storage_mb)")
            else:
                with timed(durations, "transfer"):
                    _carry(score_box, agent_layer, review)
                if scoring.keep_work is not None:  # before B starts: the carried bytes as they are
                    with timed(durations, "keep"):
                        seen.kept = _keep(score_box, scoring.keep_work)
                with timed(durations, "start_b"):
                    _hand_over(score_box)
                _verify(score_box, task, policy, scoring, attest.new_key(), result, limit,
                        transfer_roots(review, scoring.transfer),
                        ldconfig=needs_ldconfig(review.carried), durations=durations)
    except Exception as exc:  # every way scoring can break once the agent ran
        if not _engine_alive():
            return RunOutcome(label, None, durations=durations, kept=seen.kept,
                              error=f"the Docker engine stopped answering while scoring: {exc}")
        result.fail(f"scoring failed after the agent phase: {type(exc).__name__}: {exc}")
    if result.reward is None:
        result.fail("no reward")
    return RunOutcome(label, result, durations=durations, transfer=scoring.transfer,
                      footprint=seen.footprint, left_out=seen.left_out, kept=seen.kept)


def _keep(score_box: Sandbox, store: WorkStore) -> KeptLayer:
    """B's carried layer, less the grader's own paths, in ``store``; a layer that cannot be
    read is not kept (the trial is scored as ever, and must be rerun to be regraded)."""
    layer = score_box.writable_layer()
    try:
        if layer is None:
            raise OSError("the scoring container's layer is not readable")
        return snapshot(layer[0], store, skip=GRADER_OWN_PATHS)
    except OSError as exc:
        return KeptLayer(reason=f"the carried work could not be kept: {exc}")


GRADER_OWN_PATHS = (str(CONTAINER.logs_dir), GRADER_RUN_DIR)
"""What :func:`_carry` writes into B's layer beside the agent's work: never kept."""


MAX_MAPPED_PATHS = 200_000
"""Carried files named to the broker one by one; past this many, the transfer set's roots
stand for them (stricter: an image file under a root then counts as the agent's)."""


def transfer_roots(review: LayerReview, transfer: TransferSet | None) -> list[str]:
    """Where B holds files the agent wrote that a process could map as code: the broker
    refuses a key to a process that maps one (outside the closure). Every carried
    executable, symlink or shared object (the image's own files under a root are not the
    agent's), or the set's roots past :data:`MAX_MAPPED_PATHS`."""
    carried = [entry.path for entry in review.carried  # what a process could map as code
               if (stat.S_ISREG(entry.mode) or stat.S_ISLNK(entry.mode))
               and (entry.mode & 0o111 or is_shared_object(posixpath.basename(entry.path)))]
    if len(carried) > MAX_MAPPED_PATHS and transfer is not None:
        return [root.path for root in transfer.roots]
    return carried


def _carry(box: Sandbox, agent_layer: tuple[str, list[str]], review: LayerReview) -> None:
    """The agent's reviewed work (deletions as whiteouts, files moved out of A's frozen
    layer), then the grader's own paths into B's layer before B starts. The attestation
    config and the key go to the broker's standard input, never into this layer."""
    layer = box.writable_layer()
    if layer is None:
        raise SandboxError("the scoring container's writable layer is not readable here")
    writer = carry_work(layer[0], agent_layer, review)
    writer.directory(str(CONTAINER.logs_dir), 0o755, 0, 0)
    writer.directory(str(CONTAINER.verifier_dir), 0o777, 0, 0)
    writer.directory(GRADER_RUN_DIR, 0o700, 0, 0)
    writer.finish()


def _hand_over(score_box: Sandbox) -> None:
    """Start B on the carried layer. A stays frozen (none of its processes ever runs
    again) until its removal kills it, off the critical path (``teardown``); SandboxError
    when B does not start."""
    score_box.begin()


def _verify(box: Sandbox, task: Task, policy: GradingPolicy, scoring: Scoring, key: bytes,
            result: VerifierResult, limit: int, roots: list[str] | None = None, *,
            ldconfig: bool = False, durations: dict[str, float] | None = None) -> None:
    durations = {} if durations is None else durations
    with timed(durations, "broker"):
        prepared = _before_tests(box, scoring, key, result, limit, ldconfig)
    if prepared is None:
        return
    channel, watch, cache = prepared
    procs = scoring.procs
    if procs is None:
        return
    timeout = task.config.verifier.timeout_sec
    began = time.monotonic()
    try:
        config = attest_config(task, key, scoring.closure, socket=procs.socket,
                               launchers=procs.launchers, transfer_roots=roots)
        # test.sh runs in the container's working directory (the image's WORKDIR, or the
        # task's [environment] workdir), as Harbor runs it.
        run = box.exec(verifier_command(task, procs.python, procs.bash, procs.python_home),
                       timeout_s=timeout,
                       env=verifier_env(task, scoring.plugin, path=scoring.path,
                                        shell=procs.bash), stdin=config)
    finally:
        exceeded = watch.stop() if watch else None
    result.duration_s = time.monotonic() - began
    durations["verify"] = result.duration_s
    with timed(durations, "decision"):
        _decide(box, task, policy, scoring, key, result, limit, run, channel, exceeded, cache)


def _before_tests(box: Sandbox, scoring: Scoring, key: bytes, result: VerifierResult,
                  limit: int, ldconfig: bool
                  ) -> tuple[LineChannel, DiskWatch | None, str | None] | None:
    """B's loader cache rebuilt when the carried work asks for it, the signed channel
    opened and the disk watched: everything before test.sh. None: nothing can run."""
    if scoring.procs is None:
        result.fail("the image has no Python or bash on the verifier's PATH: pytest cannot "
                    "run")
        return None
    layer = box.writable_layer()
    if ldconfig:  # before the broker: nothing else has run in B yet
        rebuilt = rebuild_cache(box, scoring.closure.view)
        if rebuilt.problem:
            result.output = f"termgrade: {rebuilt.problem}\n"
        result.tampered += rebuilt.shadowed
    cache = cache_digest(layer[0]) if layer else None
    channel = box.open_channel(prefix=attest.PREFIX, end_marker=attest.end_marker(key))
    watch = DiskWatch(box, layer[0], limit) if layer else None
    return channel, watch, cache


def _decide(box: Sandbox, task: Task, policy: GradingPolicy, scoring: Scoring, key: bytes,
            result: VerifierResult, limit: int, run: ExecResult, channel: LineChannel,
            exceeded: int | None, cache: str | None) -> None:
    """From test.sh's run, the signed record and B's outputs: the reward."""
    weights = read_weights(task)
    timeout = task.config.verifier.timeout_sec
    layer = box.writable_layer()
    result.output += run.output
    if layer and cache_digest(layer[0]) != cache:
        result.tampered.append("M /etc/ld.so.cache: the loader's cache changed while the "
                               "verifier ran")
    lines = channel.close(wait_s=0.5 if run.timed_out else 5.0)
    record = attest.read_attestation(lines, key)
    if exceeded is not None:
        result.fail(f"the verifier's processes wrote {exceeded >> 20} MiB, over the "
                    f"{limit >> 20} MiB disk limit")
    if run.timed_out:
        result.fail(f"{task.paths.test_script}: timed out after {timeout:.0f} s")
    try:
        outputs = box.read_tree(CONTAINER.verifier_dir, max_bytes=MAX_VERIFIER_OUTPUT)
    except SandboxError as exc:
        outputs = {}
        result.fail(f"{CONTAINER.verifier_dir} unreadable or over "
                    f"{MAX_VERIFIER_OUTPUT >> 20} MiB: {exc}")
    result.tests = (_attested_tests(record) or read_tests(outputs, run.output))
    try:
        result.raw_reward, _ = read_reward(outputs)
    except VerifierError as exc:
        result.fail(f"{task.paths.test_script}: {exc} (exit {run.exit_code}; last output: "
                    f"{run.output[-300:]!r})")
    if layer:  # what the verifier's processes (agent code run by the tests) changed
        # (a verify-time install target is the broker's to judge: termgrade_broker.Writable)
        after = review_layer(walk_upper(layer[0]), LowerView(layer[1]), policy,
                             grader_paths=(GRADER_RUN_DIR, str(CONTAINER.verifier_dir),
                                           *box.engine_paths(),
                                           *install_roots(task, scoring.closure)))
        result.tampered += [f"{f} (while the verifier ran)" for f in after.all_findings()]
    if scoring.attestable.attested:
        decide(result, record, weights, scoring.reference)
        result.attested = True  # the task's property: a 0 here is an attested 0
    else:
        decide_unattested(result, record)


def _teardown(box: Sandbox, durations: dict[str, float]) -> None:
    """Remove ``box`` in the background; its seconds land in ``durations["teardown"]``."""
    began = time.monotonic()

    def _done(_future: object) -> None:
        durations["teardown"] = max(durations.get("teardown", 0.0), time.monotonic() - began)

    pending = box.close_later()
    if isinstance(pending, Future):
        pending.add_done_callback(_done)
    else:
        _done(None)


def _attested_tests(record: attest.Attestation) -> list[TestVerdict]:
    return [TestVerdict(v.name.split("::")[-1], v.outcome) for v in record.verdicts()]

