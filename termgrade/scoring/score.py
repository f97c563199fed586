"""Scoring the agent's work once nothing of it runs: the review, the carry into the scoring
container B, the kept work, B started, the verifier, the reward (docs/grading.md, steps 4
to 8). Grading calls :func:`score_layer` on the frozen agent container's layer
(:mod:`termgrade.scoring.trial`); a regrade on kept work rebuilt on the host
(:mod:`termgrade.scoring.replay`): one path for both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from termgrade.sandbox.base import Sandbox
from termgrade.sandbox.errors import SandboxError
from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.kept import KeptLayer, WorkStore, snapshot
from termgrade.scoring.outcome import RunOutcome
from termgrade.scoring.pair import engine_moments as moments
from termgrade.scoring.phases import timed
from termgrade.scoring.review.carry import carry_work
from termgrade.scoring.review.engine_files import sort_engine_files
from termgrade.scoring.review.integrity import LayerReview, review_layer
from termgrade.scoring.review.pathset import MarkedDirs
from termgrade.scoring.review.policy import GRADER_RUN_DIR, GradingPolicy
from termgrade.scoring.review.transfer import TransferSet
from termgrade.scoring.verifier import run_verifier
from termgrade.scoring.verifier.loader import needs_ldconfig
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.scoring.verifier.setup import Scoring
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
    files the agent changed (:mod:`termgrade.scoring.review.engine_files`); ``reference_run``: the
    agent is the task's reference solution (what its tests change is recorded, not
    judged). Every failure to score is the agent's, unless the engine itself stopped
    answering (unscored)."""
    policy = GradingPolicy.for_task(task, scoring.closure.dirs + scoring.closure.files,
                                    scoring.path, scoring.tool_env)
    limit = scoring.storage_bytes
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
                run_verifier(score_box, task, policy, scoring, result,
                             transfer_roots(review, scoring.transfer),
                             ldconfig=needs_ldconfig(review.carried), durations=durations,
                             carried=frozenset([*(e.path for e in review.carried),
                                                *review.deleted]),
                             reference_run=reference_run,
                             watched_links=review.watched_links)
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
    (:mod:`termgrade.scoring.pair.engine_moments`)."""
    score_box.begin()
    moments.arrive()
