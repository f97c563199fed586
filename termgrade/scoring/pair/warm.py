"""The warm pool: container pairs made ahead for trials known to be coming.

Creating A and B (and staging B's grader) costs about 0.2 s of engine time a trial. A
runner that knows a trial of a task is coming (``grade`` has the next attempt queued,
``verify`` runs the oracle and the nop of one task) asks :data:`WARM` to make that
trial's :class:`~termgrade.scoring.pair.containers.Pair` ahead, on one background thread, while
other trials run; the trial then takes it (:meth:`WarmPool.take`) instead of making its
own. Nothing else changes: a warm pair is exactly the pair the trial would have made
(:mod:`termgrade.scoring.pair.containers`), and a pair whose spec differs from the trial's is
removed, never used.

Bounded and reaped: at most :attr:`WarmPool.limit` pairs are ready or being made; the
runner drains what it asked for when it ends (:meth:`WarmPool.drain`), and so does the
interpreter at exit. Warm containers carry the run's ownership labels like any other
(:mod:`termgrade.sandbox.ownership`): an interrupted ``grade`` removes them with the rest
of its run, and ``termgrade doctor --reap`` finds any that a killed process left.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from termgrade.sandbox.ownership import current_run, run_scope
from termgrade.scoring.pair import engine_moments as moments
from termgrade.scoring.pair.containers import Pair, PairSpec

DEFAULT_LIMIT = 2
"""Pairs ready or being made at once (each holds a started A: memory, no CPU)."""
MOMENT_WAIT_S = 1.0
"""How long a pair to make waits for a trial's B to start first
(:mod:`termgrade.scoring.pair.engine_moments`): a trial's start of B then has the engine to
itself. Past it (agent phases of minutes, no trial running), the pair is made anyway."""


class WarmPool:
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._ready: dict[str, list[Future[Pair]]] = defaultdict(list)
        self._maker: ThreadPoolExecutor | None = None
        self._wanted: dict[Future[Pair], threading.Event] = {}
        """A pair not taken yet: set when its trial waits for it, or the pool drains (make
        it now)."""
        self.made = 0
        """Pairs made ahead so far (for the benchmarks)."""
        self.used = 0
        """Of those, pairs a trial took."""

    def _executor(self) -> ThreadPoolExecutor:
        if self._maker is None:
            self._maker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="termgrade-warm")
        return self._maker

    def pending(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._ready.values())

    def make_ahead(self, key: str, make: Callable[[], Pair]) -> bool:
        """Make a pair for a coming trial under ``key`` (a task's root, or a name one trial
        takes it by) in the background, under this thread's run id; False when the pool is
        full (the trial makes its own)."""
        run = current_run()

        seen = moments.now()
        wanted = threading.Event()

        def _made() -> Pair:
            # after a trial's B has started (its test.sh runs then), or its trial waits
            moments.wait_after(seen, MOMENT_WAIT_S, wanted)
            with run_scope(run):
                return make()

        with self._lock:
            if self.limit <= 0 or sum(len(v) for v in self._ready.values()) >= self.limit:
                return False
            future = self._executor().submit(_made)
            self._ready[key].append(future)
            self._wanted[future] = wanted
            self.made += 1
        return True

    def take(self, spec: PairSpec, key: str | None = None) -> Pair | None:
        """The oldest pair made ahead under ``key`` (default: ``spec``'s task) when it
        matches ``spec`` (waits for one still being made); None when there is none, it
        failed, or it differs (then it is removed)."""
        with self._lock:
            queue = self._ready.get(key or spec.task_root)
            future = queue.pop(0) if queue else None
            wanted = self._wanted.pop(future, None) if future is not None else None
        if future is None:
            return None
        if wanted is not None:  # it may not have begun: its trial waits for it
            wanted.set()
            moments.wake()
        try:
            pair = future.result()
        except Exception:  # the trial makes its own and reports its own failure
            return None
        if pair.spec != spec:
            pair.discard()
            return None
        pair.warm = True
        with self._lock:
            self.used += 1
        return pair

    def drain(self, key: str | None = None) -> int:
        """Remove the pairs made ahead (for ``key`` only, when given) and not taken: how
        many. Pairs still being made are waited for, then removed."""
        with self._lock:
            keys = [key] if key is not None else list(self._ready)
            futures = [f for k in keys for f in self._ready.pop(k, [])]
            waiting = [self._wanted.pop(f) for f in futures if f in self._wanted]
        for wanted in waiting:  # one waiting for its moment is made (then removed) now
            wanted.set()
        moments.wake()
        removed = 0
        for future in futures:
            if future.cancel():
                continue
            with contextlib.suppress(Exception):
                future.result().discard()
                removed += 1
        return removed


WARM = WarmPool()
"""This process's warm pool."""
atexit.register(WARM.drain)
