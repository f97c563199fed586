"""The phases of a trial, timed: where a trial's seconds go, by name.

A trial's ``durations`` (:class:`termgrade.scoring.trial.RunOutcome`) holds one entry per
phase it reached, in seconds, on the critical path (from the call until the reward is
known) unless said otherwise:

========== ============================================================================
prepare    the scoring image, the verifier's closure, the transfer set, the grader staged
create     container A started and B created (0 when both came warm from the pool)
agent      the agent phase (the model's turns and its commands in A)
freeze     A paused and its disk use checked
review     A's writable layer reviewed on the host (findings, what is carried)
rebuild    a regrade's kept work rebuilt on the host (in place of ``agent``)
transfer   the reviewed work moved into B's layer
keep       the carried work kept (``grade --keep-work``), before B starts
start_b    B started (A killed meanwhile)
broker     the loader cache, the channel and the attestation config, before test.sh
verify     test.sh (with the broker and every pytest session it starts) in B
decision   the signed record read and checked, B's outputs read, the reward decided
record     the trial's record made (``grade``; after ``total``)
teardown   both containers removed, in the background (off the critical path)
warm_wait  waiting for a pair of containers the warm pool was still making
========== ============================================================================

:func:`profile` turns many trials' durations into each phase's share of the total,
median and 90th percentile; ``benchmarks/grade_throughput.py`` and ``termgrade run
--timings`` print it.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

PHASES = ("prepare", "warm_wait", "create", "agent", "rebuild", "freeze", "review",
          "transfer", "keep", "start_b", "broker", "verify", "decision", "record", "teardown")
LABELS = {"start_b": "start B", "verify": "test.sh", "create": "create/start A+B",
          "warm_wait": "warm wait"}
OFF_PATH = frozenset({"teardown", "record"})
"""Phases not inside ``total`` (background, or after the reward is known)."""


@contextlib.contextmanager
def timed(durations: dict[str, float], name: str) -> Iterator[None]:
    """Add the block's wall time to ``durations[name]``."""
    began = time.monotonic()
    try:
        yield
    finally:
        durations[name] = durations.get(name, 0.0) + time.monotonic() - began


@dataclass(frozen=True)
class PhaseStat:
    name: str
    share: float
    """Of the summed ``total`` of the trials (off-path phases: of the same sum)."""
    median: float
    p90: float
    trials: int
    """Trials that reached the phase."""


def quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank quantile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def profile(trials: Sequence[dict[str, float]]) -> list[PhaseStat]:
    """Each known phase's share, median and p90 over ``trials`` (their ``durations``)."""
    total = sum(t.get("total", 0.0) for t in trials) or 1.0
    stats = []
    for name in PHASES:
        values = [t[name] for t in trials if name in t]
        if values:
            stats.append(PhaseStat(name, sum(values) / total, statistics.median(values),
                                   quantile(values, 0.9), len(values)))
    return stats


def render(stats: Sequence[PhaseStat]) -> str:
    """The profile as a table, one phase a line."""
    lines = [f"  {'phase':<18}{'share':>7}{'median':>9}{'p90':>9}"]
    for stat in stats:
        mark = " (off the critical path)" if stat.name in OFF_PATH else ""
        lines.append(f"  {LABELS.get(stat.name, stat.name):<18}{stat.share:>7.1%}"
                     f"{stat.median:>8.3f}s{stat.p90:>8.3f}s{mark}")
    return "\n".join(lines)
