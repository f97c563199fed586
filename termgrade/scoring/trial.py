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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from termgrade.agent.kinds import Agent, AgentRun, agent_label, require_runnable, run_agent
from termgrade.core.errors import ImageBuildError, SandboxError, VerifierError
from termgrade.records.verdict import TestVerdict
from termgrade.sandbox.base import Sandbox
from termgrade.sandbox.diskwatch import DiskWatch
from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.sandbox.ownership import current_run
from termgrade.sandbox.seccomp import scoring_profile
from termgrade.scoring import attestation as attest
from termgrade.scoring.attestable import Attestability, from_reference
from termgrade.scoring.carry import carry_work
from termgrade.scoring.closure import PYTHON_NAME, VERIFIER_PATH, Closure, find_closure
from termgrade.scoring.grader_procs import (
    GraderProcs,
    grader_procs,
    image_config,
)
from termgrade.scoring.integrity import LayerReview, review_layer
from termgrade.scoring.loader import cache_digest, needs_ldconfig, rebuild_cache
from termgrade.scoring.policy import GRADER_DIR, GRADER_RUN_DIR, GradingPolicy
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.scoring.scoring_box import (
    TESTS_TMPFS_BYTES,
    scoring_environment,
    scoring_image,
    stage_grader,
    task_limits,
)
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
    """Seconds: ``start`` (A started, B created), ``agent``, ``snapshot`` (freeze, review,
    carry, A killed and B started), ``verify`` (test.sh), ``total`` (until the reward is
    known)."""
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


def _start(image: str, task: Task, label: str, read_only: dict[str, str] | None,
           run: str | None = None, command: list[str] | None = None,
           env: dict[str, str] | None = None) -> Sandbox:
    """The agent's container A, started; or (``read_only`` given) the scoring container B,
    created but not started: its writable layer is filled on the host after the review.
    ``run``: the run id the container carries (the caller's thread's: this one is a
    pool's)."""
    from termgrade.sandbox.docker_sandbox import DockerSandbox
    from termgrade.sandbox.ownership import run_scope

    with run_scope(run):
        if read_only is None:
            return DockerSandbox.start(
                image, limits=task_limits(task), env=task.config.environment.env,
                workdir=task.config.environment.workdir, label=label)
        scoring = scoring_environment(task)
        return DockerSandbox.create(
            image, limits=task_limits(task, scoring), env={**scoring.env, **(env or {})},
            workdir=scoring.workdir, label=label, read_only=read_only,
            seccomp=scoring_profile(), command=command,
            tmpfs={str(CONTAINER.tests_dir): TESTS_TMPFS_BYTES})


def _closure(image: str, task: Task, path: str = VERIFIER_PATH) -> Closure:
    return find_closure(image, path=task.config.verifier.env.get("PATH", path))


def transfer_set_for(task: Task, image: str, closure: Closure,
                     reference: ReferenceRecord | None = None) -> TransferSet:
    """The task's transfer set on ``image`` (``termgrade run`` prints it)."""
    return derive_transfer_set(task, workdir=image_config(image)[1], reference=reference,
                               resolve=image_resolver(closure.view))


def run_task(task: Task, image: str, agent: Agent, *, keep: bool = False,
             reference: ReferenceRecord | None = None,
             attestable: Attestability | None = None) -> RunOutcome:
    """Run ``agent`` on ``task`` in a fresh container of ``image`` and score it in another.

    ``keep`` leaves both containers for inspection instead of removing them.
    ``reference``: the reference solution's recorded run (default: the one ``verify``
    recorded for this task's content, if any).
    ``attestable``: the task's attestability (:func:`termgrade.audit.attestable.
    attestability`); default: what its recorded reference run says, else attestable.
    """
    if reference is None:
        reference = reference_for(task)
    attestable = attestable or from_reference(reference)
    outcome = _run_task(task, image, agent, keep=keep, attestable=attestable,
                        reference=reference)
    outcome.attested = attestable.attested
    return outcome


def _run_task(task: Task, image: str, agent: Agent, *, keep: bool,
              attestable: Attestability, reference: ReferenceRecord | None) -> RunOutcome:
    require_runnable(agent, task)
    label = agent_label(agent)
    started = time.monotonic()
    durations: dict[str, float] = {}
    from docker.errors import DockerException

    try:
        score_image = scoring_image(task, image)
        image_env, _workdir = image_config(score_image)
        path = task.config.verifier.env.get("PATH", verifier_path(image_env))
        closure = _closure(score_image, task, path)
        transfer = transfer_set_for(task, image, closure, reference)
    except (SandboxError, ImageBuildError, DockerException) as exc:
        return RunOutcome(label, None, error=f"the verifier's image and closure: {exc}",
                          durations={"total": time.monotonic() - started})
    procs = grader_procs(closure, path)
    staged, module = stage_grader(task, closure, procs)
    mounts = {**closure.mounts(install_roots(task, closure)),
              **(procs.mounts(closure.view) if procs else {}),
              GRADER_DIR: str(staged / "grader")}
    agent_box: Sandbox | None = None
    score_box: Sandbox | None = None
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            run = current_run()
            want_a = pool.submit(_start, image, task, f"{task.safe_name}-{label}", None, run)
            want_b = pool.submit(_start, score_image, task, f"{task.safe_name}-{label}-score",
                                 mounts, run, procs.init_command() if procs else None,
                                 procs.container_env() if procs else None)
            errors = []
            for future in (want_a, want_b):
                try:
                    box = future.result()
                except SandboxError as exc:
                    errors.append(str(exc))
                    continue
                if future is want_a:
                    agent_box = box
                else:
                    score_box = box
        if errors or agent_box is None or score_box is None:
            return RunOutcome(label, None, error="; ".join(errors) or "no container",
                              durations={"total": time.monotonic() - started})
        durations["start"] = time.monotonic() - started
        return _run_started(task, agent, label, agent_box, score_box, durations, started,
                            Scoring(closure, module, attestable, transfer, reference,
                                    procs, path))
    finally:
        for started_box in (agent_box, score_box):
            if started_box is not None and not keep:
                started_box.close_later()
        if not keep:  # a kept scoring container still mounts the staged tests
            shutil.rmtree(staged, ignore_errors=True)
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

    @property
    def python(self) -> str | None:
        """The closure's interpreter that runs the broker (any of the image's)."""
        if self.procs is not None:
            return self.procs.python
        found = [f for f in self.closure.files if PYTHON_NAME.match(posixpath.basename(f))]
        return found[0] if found else None


def _run_started(task: Task, agent: Agent, label: str, agent_box: Sandbox, score_box: Sandbox,
                 durations: dict[str, float], started: float, scoring: Scoring) -> RunOutcome:
    policy = GradingPolicy.for_task(task, scoring.closure.dirs + scoring.closure.files,
                                    scoring.path)
    limit = task_limits(task).storage_mb << 20
    layer = agent_box.writable_layer()
    if layer is None or score_box.writable_layer() is None:
        return RunOutcome(label, None, durations=durations, error=(
            "the engine's writable layers are not readable on this host (TermGrade grades "
            "on a local Docker engine with the overlay2 storage driver, as root)"))
    upper, lowers = layer
    # From here on the agent has acted: a failure to score is its failure, not unscored.
    watch = DiskWatch(agent_box, upper, limit)
    agent_run = AgentRun(result=None)
    try:
        agent_run = run_agent(agent, agent_box, task)
    except SandboxError as exc:
        agent_run = AgentRun(result=None, error=f"agent phase: {exc}")
    finally:
        watch.stop()
        agent_box.halt()
    durations["agent"] = agent_run.duration_s
    if agent_run.infrastructure_error is not None:
        return RunOutcome(label, None, durations=durations, agent_run=agent_run,
                          error=f"the model endpoint: {agent_run.infrastructure_error}")
    marked = time.monotonic()
    result = VerifierResult(reward=None, attested=scoring.attestable.attested)
    seen = RunOutcome(label, None, transfer=scoring.transfer)
    try:
        exceeded = watch.check_now()
        if exceeded is not None:
            result.fail(f"the agent wrote {exceeded >> 20} MiB to the container's disk, over "
                        f"its {limit >> 20} MiB limit ([environment] storage_mb)")
        else:
            review = review_layer(walk_upper(upper), LowerView(lowers), policy,
                                  grader_paths=agent_box.engine_paths(),
                                  transfer=scoring.transfer)
            result.tampered = review.all_findings()
            seen.footprint, seen.left_out = review.footprint, review.left_out_summary()
            if review.carried_bytes > limit:  # a sparse file counts at its full length
                result.fail(f"the agent's files add up to {review.carried_bytes >> 20} MiB, "
                            f"over the {limit >> 20} MiB disk limit ([environment] storage_mb)")
            else:
                _carry(score_box, layer, review)
                _hand_over(agent_box, score_box)
                durations["snapshot"] = time.monotonic() - marked
                _verify(score_box, task, policy, scoring, attest.new_key(), result, limit,
                        transfer_roots(review, scoring.transfer),
                        ldconfig=needs_ldconfig(review.carried))
            durations["verify"] = result.duration_s
    except Exception as exc:  # every way scoring can break once the agent ran
        if not _engine_alive():
            return RunOutcome(label, None, agent_run.error, durations=durations,
                              agent_run=agent_run,
                              error=f"the Docker engine stopped answering while scoring: {exc}")
        result.fail(f"scoring failed after the agent phase: {type(exc).__name__}: {exc}")
    if result.reward is None:
        result.fail("no reward")
    return RunOutcome(label, result, agent_run.error, durations=durations, agent_run=agent_run,
                      transfer=scoring.transfer, footprint=seen.footprint,
                      left_out=seen.left_out)


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


def _hand_over(agent_box: Sandbox, score_box: Sandbox) -> None:
    """Kill every process of A (frozen until now: none ever runs again) while B starts on
    the carried layer. SandboxError when B does not start."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        killed = pool.submit(agent_box.halt, kill=True)
        try:
            score_box.begin()
        finally:
            killed.result()


def _verify(box: Sandbox, task: Task, policy: GradingPolicy, scoring: Scoring, key: bytes,
            result: VerifierResult, limit: int, roots: list[str] | None = None, *,
            ldconfig: bool = False) -> None:
    procs = scoring.procs
    if procs is None:
        result.fail("the image has no Python or bash on the verifier's PATH: pytest cannot "
                    "run")
        return
    weights = read_weights(task)
    layer = box.writable_layer()
    if ldconfig:  # before the broker: nothing else has run in B yet
        rebuilt = rebuild_cache(box, scoring.closure.view)
        if rebuilt.problem:
            result.output = f"termgrade: {rebuilt.problem}\n"
        result.tampered += rebuilt.shadowed
    cache = cache_digest(layer[0]) if layer else None
    channel = box.open_channel(prefix=attest.PREFIX, end_marker=attest.end_marker(key))
    watch = DiskWatch(box, layer[0], limit) if layer else None
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


def _attested_tests(record: attest.Attestation) -> list[TestVerdict]:
    return [TestVerdict(v.name.split("::")[-1], v.outcome) for v in record.verdicts()]

