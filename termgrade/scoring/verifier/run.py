"""The verifier run: test.sh in the scoring container, from the loader cache and the broker
to the decision (docs/grading.md, steps 6 to 8). :func:`run_verifier` is the one call the
scoring path (:mod:`termgrade.scoring.score`) makes once B has started on the carried work.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from termgrade.records.verdict import TestVerdict
from termgrade.sandbox.base import ExecResult, Sandbox
from termgrade.sandbox.channel import LineChannel
from termgrade.sandbox.diskwatch import DiskWatch
from termgrade.sandbox.errors import SandboxError
from termgrade.sandbox.layer_files import read_layer_files
from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.errors import VerifierError
from termgrade.scoring.phases import timed
from termgrade.scoring.review.integrity import review_layer
from termgrade.scoring.review.policy import GRADER_RUN_DIR, GradingPolicy
from termgrade.scoring.review.watched import WATCH_SKIP, Watched, gone_entries, watched
from termgrade.scoring.verifier import attestation as attest
from termgrade.scoring.verifier.command import (
    MAX_VERIFIER_OUTPUT,
    attest_config,
    install_roots,
    verifier_command,
    verifier_env,
)
from termgrade.scoring.verifier.decision import decide, decide_unattested, judge_changes
from termgrade.scoring.verifier.during import (
    Trust,
    account_texts,
    identities,
    image_changes,
    written_through,
)
from termgrade.scoring.verifier.loader import CACHE, cache_digest, rebuild_cache
from termgrade.scoring.verifier.result import VerifierResult, read_reward, read_tests, read_weights
from termgrade.scoring.verifier.setup import Scoring
from termgrade.task import CONTAINER, Task


def run_verifier(box: Sandbox, task: Task, policy: GradingPolicy, scoring: Scoring,
                 result: VerifierResult, roots: list[str] | None = None, *,
                 ldconfig: bool = False, durations: dict[str, float] | None = None,
                 carried: frozenset[str] = frozenset(), reference_run: bool = False,
                 watched_links: Mapping[str, str] | None = None) -> None:
    """The verifier's run in the started scoring container ``box`` and its decision, into
    ``result`` (docs/grading.md, steps 6 to 8 and "The decision"): the loader cache rebuilt
    when ``ldconfig`` (the carried work holds a library or loader configuration), the
    broker, test.sh, the signed record read with this run's fresh key, what the verifier's
    processes changed judged, the reward. ``roots``: where B holds the agent's files (the
    broker refuses a key to a process that maps one); ``carried``: the carried paths;
    ``reference_run``: the agent is the task's reference solution (what its tests change
    is recorded, not judged); ``watched_links``: the agent's links at paths only the tests
    name (link -> its file), whose file must not change while the tests run."""
    key = attest.new_key()
    limit = scoring.storage_bytes
    links = dict(watched_links or {})
    durations = {} if durations is None else durations
    with timed(durations, "broker"):
        prepared = _before_tests(box, scoring, key, result, limit, ldconfig)
    if prepared is None:
        return
    channel, watch, cache = prepared
    layer = box.writable_layer()
    before = identities(layer[0], links.values()) if layer and links else {}
    accounts = account_texts(layer[0]) if layer else {}
    procs = scoring.procs
    if procs is None:
        return
    timeout = task.config.verifier.timeout_sec
    began = time.monotonic()
    names = watched(LowerView(layer[1]), scoring.tool_env, scoring.transfer) \
        if layer else Watched()
    grader = _grader_paths(box, task, scoring)
    try:
        config = attest_config(task, key, scoring.closure, socket=procs.socket,
                               launchers=procs.launchers, transfer_roots=roots,
                               path=scoring.path, carried=carried, names=names,
                               names_skip=(*WATCH_SKIP, *grader))
        # test.sh runs in the container's working directory (the image's WORKDIR, or the
        # task's [environment] workdir), as Harbor runs it.
        run = box.exec(verifier_command(task, procs.python, procs.bash, procs.python_home),
                       timeout_s=timeout,
                       env=verifier_env(task, scoring.plugin, path=scoring.path,
                                        shell=procs.bash, pythonpath=scoring.pythonpath),
                       stdin=config)
    finally:
        exceeded = watch.stop() if watch else None
    result.duration_s = time.monotonic() - began
    durations["verify"] = result.duration_s
    with timed(durations, "decision"):
        if layer and before:  # before the decision: a finding scores 0
            result.tampered += written_through(layer[0], links, before)
        _decide(box, task, policy, scoring, key, result, limit, run, channel, exceeded, cache,
                carried, reference_run, accounts, names.files, grader)


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
            reference_run: bool, accounts: dict[str, str], watched_files: frozenset[str],
            grader: tuple[str, ...]) -> None:
    """From test.sh's run, the signed record and B's outputs: the reward. ``carried``: the
    paths of the agent's work carried into B before it started; ``reference_run``: the
    agent is the task's reference solution (what its tests change is recorded);
    ``accounts``: the account databases as carried, read before the tests;
    ``watched_files``: the named image files the broker watched themselves; ``grader``:
    what the grader and the engine put into B (:func:`_grader_paths`)."""
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
        entries = list(walk_upper(layer[0]))
        lower = LowerView(layer[1])  # one view: what it learns serves both looks
        after = review_layer(entries, lower, policy, grader_paths=grader,
                             standins=scoring.transfer)
        # the reference's run records every image file its tests changed, asked-for
        # paths included: a later trial may read that path as an input
        changed = image_changes(entries, lower, carried=carried,
                                transfer=None if reference_run else scoring.transfer,
                                skip=grader, accounts=accounts,
                                written=frozenset(record.written),
                                watched=watched_files if record.ended else frozenset())
        if cache_changed:
            changed.append((CACHE, Trust.SOFTWARE))
        standins = list(zip(after.finding_paths, after.findings, strict=True))
        # what agent code made where a tool looks and removed before the end: the same review
        gone = gone_entries(record.gone, {e.path for e in entries})
        if gone:
            seen = review_layer(gone, lower, policy, grader_paths=grader,
                                standins=scoring.transfer)
            standins += [(p, f"{why} (made while the tests ran, gone by their end)")
                         for p, why in zip(seen.finding_paths, seen.findings, strict=True)]
        if after.unlisted:
            result.tampered.append(f"... and {after.unlisted} more findings (while the "
                                   "verifier ran)")
        judge_changes(result, changed, standins, scoring.reference,
                       reference_run=reference_run)
    if scoring.attestable.attested:
        decide(result, record, weights, scoring.reference)
        result.attested = True  # the task's property: a 0 here is an attested 0
    else:
        decide_unattested(result, record)


def _grader_paths(box: Sandbox, task: Task, scoring: Scoring) -> tuple[str, ...]:
    """What the grader and the engine put into B: never the agent's, never judged."""
    return (GRADER_RUN_DIR, str(CONTAINER.verifier_dir), str(CONTAINER.logs_dir),
            str(CONTAINER.tests_dir), *box.engine_paths(), *install_roots(task, scoring.closure))


def _attested_tests(record: attest.Attestation) -> list[TestVerdict]:
    return [TestVerdict(v.name.split("::")[-1], v.outcome) for v in record.verdicts()]
