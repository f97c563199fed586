"""Scoring the agent's work once nothing of it runs: the review, the carry into the scoring
container B, the kept work, B started, the verifier, the reward (docs/grading.md, steps 4
to 8). Grading calls :func:`score_layer` on the frozen agent container's layer
(:mod:`termgrade.scoring.trial`); a regrade on kept work rebuilt on the host
(:mod:`termgrade.scoring.replay`): one path for both.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from termgrade.records.verdict import TestVerdict
from termgrade.sandbox.base import ExecResult, Sandbox
from termgrade.sandbox.channel import LineChannel
from termgrade.sandbox.diskwatch import DiskWatch
from termgrade.sandbox.errors import SandboxError
from termgrade.sandbox.layer_files import read_layer_files
from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring import attestation as attest
from termgrade.scoring import engine_moments as moments
from termgrade.scoring.carry import carry_work
from termgrade.scoring.during import Trust, image_changes, unexplained
from termgrade.scoring.engine_files import sort_engine_files
from termgrade.scoring.errors import VerifierError
from termgrade.scoring.integrity import LayerReview, review_layer
from termgrade.scoring.kept import KeptLayer, WorkStore, snapshot
from termgrade.scoring.loader import CACHE, cache_digest, needs_ldconfig, rebuild_cache
from termgrade.scoring.outcome import RunOutcome, Scoring
from termgrade.scoring.pathset import MarkedDirs
from termgrade.scoring.phases import timed
from termgrade.scoring.policy import GRADER_RUN_DIR, GradingPolicy
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.scoring_box import task_limits
from termgrade.scoring.standins import startup_or_config
from termgrade.scoring.transfer import TransferSet
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
)
from termgrade.task import CONTAINER, Task


def _engine_alive() -> bool:
    from termgrade.sandbox.engine import docker_client

    try:
        return bool(docker_client().ping())
    except Exception:
        return False


NO_LAYERS = ("the engine's writable layers are not readable on this host (TermGrade grades "
             "on a local Docker engine with the overlay2 storage driver, as root)")


def score_layer(task: Task, agent_layer: tuple[str, list[str]], engine_paths: tuple[str, ...],
                score_box: Sandbox, scoring: Scoring, durations: dict[str, float], *,
                label: str, exceeded: Callable[[], int | None] | None = None,
                engine_files: Mapping[str, bytes | None] | None = None,
                reference_run: bool = False) -> RunOutcome:
    """Score the agent's work in ``agent_layer`` (an overlay upper directory and the image's
    layers below it, nothing of it running): review it, carry what the transfer set lets
    through into the created, never started ``score_box``, keep it (``scoring.keep_work``),
    start B and run the verifier. Grading calls it on the frozen agent container's layer
    (``exceeded``: its disk watch's last measure); a regrade on kept work rebuilt on the
    host (:mod:`termgrade.scoring.replay`); ``engine_files``: the engine's per-container
    files the agent changed (:mod:`termgrade.scoring.engine_files`); ``reference_run``: the
    agent is the task's reference solution (what its tests change is recorded, not
    judged). Every failure to score is the agent's, unless the engine itself stopped
    answering (unscored)."""
    policy = GradingPolicy.for_task(task, scoring.closure.dirs + scoring.closure.files,
                                    scoring.path, scoring.tool_env)
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
            etc = sort_engine_files(engine_files or {}, scoring.transfer, review)
            result.tampered = review.all_findings()
            seen.footprint, seen.left_out = review.footprint, review.left_out_summary()
            seen.standins = review.standins
            if review.carried_bytes > limit:  # a sparse file counts at its full length
                result.fail(f"the agent's files add up to {review.carried_bytes >> 20} MiB, "
                            f"over the {limit >> 20} MiB disk limit ([environment] storage_mb)")
            else:
                with timed(durations, "transfer"):
                    _carry(score_box, agent_layer, review)
                    for path, data in etc.items():  # B's own copy, before it starts
                        score_box.write_engine_file(path, data)
                if scoring.keep_work is not None:  # before B starts: the carried bytes as they are
                    with timed(durations, "keep"):
                        seen.kept = _keep(score_box, scoring.keep_work)
                with timed(durations, "start_b"):
                    _hand_over(score_box)
                _verify(score_box, task, policy, scoring, attest.new_key(), result, limit,
                        transfer_roots(review, scoring.transfer),
                        ldconfig=needs_ldconfig(review.carried), durations=durations,
                        carried=frozenset([*(e.path for e in review.carried),
                                           *review.deleted]),
                        reference_run=reference_run)
    except Exception as exc:  # every way scoring can break once the agent ran
        if not _engine_alive():
            return RunOutcome(label, None, durations=durations, kept=seen.kept,
                              error=f"the Docker engine stopped answering while scoring: {exc}")
        result.fail(f"scoring failed after the agent phase: {type(exc).__name__}: {exc}")
    if result.reward is None:
        result.fail("no reward")
    return RunOutcome(label, result, durations=durations, transfer=scoring.transfer,
                      footprint=seen.footprint, left_out=seen.left_out, kept=seen.kept,
                      standins=seen.standins)


def _keep(score_box: Sandbox, store: WorkStore) -> KeptLayer:
    """B's carried layer, less the grader's own paths, in ``store``; a layer that cannot be
    read is not kept (the trial is scored as ever, and must be rerun to be regraded)."""
    layer = score_box.writable_layer()
    try:
        if layer is None:
            raise OSError("the scoring container's layer is not readable")
        return snapshot(layer[0], store, skip=GRADER_OWN_PATHS)
    except Exception as exc:  # keeping never changes a grade: the trial is scored as ever
        return KeptLayer(reason=f"the carried work could not be kept: "
                         f"{type(exc).__name__}: {exc}")


GRADER_OWN_PATHS = (str(CONTAINER.logs_dir), GRADER_RUN_DIR)
"""What :func:`_carry` writes into B's layer beside the agent's work: never kept."""


MAX_MAPPED_PATHS = 200_000
"""Carried files named to the broker one by one; past this many, the transfer set's roots
stand for them (stricter: an image file under a root then counts as the agent's)."""


def transfer_roots(review: LayerReview, transfer: TransferSet | None) -> list[str]:
    """Where B holds files the agent wrote, any of which a process could map as code (a
    library needs neither an exec bit nor a ``.so`` name to be ``dlopen``ed or
    ``mmap``ed): the broker refuses a key to a process that maps one (outside the
    closure). The top-most carried entries (a carried directory stands for everything in
    it; the image's own files beside them are not the agent's), or the set's roots past
    :data:`MAX_MAPPED_PATHS`."""
    tops: list[str] = []
    marked = MarkedDirs()
    for entry in review.carried:  # parents first
        if marked.below(entry.path):
            continue
        if entry.is_dir:
            marked.add(entry.path)
        tops.append(entry.path)
    if len(tops) > MAX_MAPPED_PATHS and transfer is not None:
        return [root.path for root in transfer.roots]
    return tops


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
    when B does not start. Then the warm pool may make its next pair
    (:mod:`termgrade.scoring.engine_moments`)."""
    score_box.begin()
    moments.arrive()


def _verify(box: Sandbox, task: Task, policy: GradingPolicy, scoring: Scoring, key: bytes,
            result: VerifierResult, limit: int, roots: list[str] | None = None, *,
            ldconfig: bool = False, durations: dict[str, float] | None = None,
            carried: frozenset[str] = frozenset(), reference_run: bool = False) -> None:
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
        _decide(box, task, policy, scoring, key, result, limit, run, channel, exceeded, cache,
                carried, reference_run)


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
            exceeded: int | None, cache: str | None, carried: frozenset[str],
            reference_run: bool) -> None:
    """From test.sh's run, the signed record and B's outputs: the reward. ``carried``: the
    paths of the agent's work carried into B before it started; ``reference_run``: the
    agent is the task's reference solution (what its tests change is recorded)."""
    weights = read_weights(task)
    timeout = task.config.verifier.timeout_sec
    layer = box.writable_layer()
    result.output += run.output
    cache_changed = layer is not None and cache_digest(layer[0]) != cache
    lines = channel.close(wait_s=0.5 if run.timed_out else 5.0)
    record = attest.read_attestation(lines, key)
    if exceeded is not None:
        result.fail(f"the verifier's processes wrote {exceeded >> 20} MiB, over the "
                    f"{limit >> 20} MiB disk limit")
    if run.timed_out:
        result.fail(f"{task.paths.test_script}: timed out after {timeout:.0f} s")
    try:
        outputs = (read_layer_files(layer[0], CONTAINER.verifier_dir,
                                    max_bytes=MAX_VERIFIER_OUTPUT) if layer else
                   box.read_tree(CONTAINER.verifier_dir, max_bytes=MAX_VERIFIER_OUTPUT))
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
        grader = (GRADER_RUN_DIR, str(CONTAINER.verifier_dir), str(CONTAINER.logs_dir),
                  str(CONTAINER.tests_dir), *box.engine_paths(),
                  *install_roots(task, scoring.closure))
        entries = list(walk_upper(layer[0]))
        after = review_layer(entries, LowerView(layer[1]), policy, grader_paths=grader,
                             standins=scoring.transfer)
        changed = image_changes(entries, LowerView(layer[1]), carried=carried,
                                transfer=scoring.transfer, skip=grader)
        if cache_changed:
            changed.append((CACHE, Trust.SOFTWARE))
        standins = list(zip(after.finding_paths, after.findings, strict=True))
        if after.unlisted:
            result.tampered.append(f"... and {after.unlisted} more findings (while the "
                                   "verifier ran)")
        _judge_changes(result, changed, standins, scoring.reference,
                       reference_run=reference_run)
    if scoring.attestable.attested:
        decide(result, record, weights, scoring.reference)
        result.attested = True  # the task's property: a 0 here is an attested 0
    else:
        decide_unattested(result, record)


def _judge_changes(result: VerifierResult, changed: list[tuple[str, Trust]],
                   standins: list[tuple[str, str]], reference: ReferenceRecord | None, *,
                   reference_run: bool) -> None:
    """What the verifier's processes changed (:mod:`termgrade.scoring.during`): the image's
    files (``changed``) and created stand-ins (``standins``: path and finding). A change
    the reference solution's own run made too is the tests' (or the task's program's);
    the reference's run itself is recorded, not judged (it is how the tests' own changes
    are known). Otherwise software, or with a recorded reference anything a later test
    or tool trusts, is a finding; a stand-in is a finding except a start-up or tool
    configuration with no reference to tell (a test's own ``git config --global``); the
    rest is said."""
    result.image_changes = sorted({p for p, _ in changed} | {p for p, _ in standins})
    if reference_run:
        return
    known = reference.verifier_changes if reference is not None else None
    extra = set(unexplained(result.image_changes, known or []))
    floor = Trust.SOFTWARE if known is None else Trust.TRUSTED
    bad = [p for p, level in changed if p in extra and level >= floor]
    result.tampered += [
        f"M {p}: an image file changed while the tests ran, which the reference solution's "
        "run did not change (agent code the tests ran rewrote what a later test or tool "
        "reads)" for p in bad[:MAX_LISTED_CHANGES]]
    said = [p for p, _ in changed if p in extra and p not in bad]
    for path, finding in standins:
        if path not in extra:
            continue  # the reference's run made it too
        if known is None and startup_or_config(path):
            said.append(path)
        else:
            result.tampered.append(f"{finding} (while the verifier ran)")
    if said:
        why = ("not judged: no reference run recorded what its tests change" if known is None
               else "data the reference's run did not change, not judged")
        more = f" and {len(said) - MAX_LISTED_CHANGES} more" \
            if len(said) > MAX_LISTED_CHANGES else ""
        result.output += (f"\ntermgrade: changed while the tests ran ({why}): "
                          f"{', '.join(said[:MAX_LISTED_CHANGES])}{more}\n")


MAX_LISTED_CHANGES = 20


def _attested_tests(record: attest.Attestation) -> list[TestVerdict]:
    return [TestVerdict(v.name.split("::")[-1], v.outcome) for v in record.verdicts()]
