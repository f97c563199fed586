"""Where trials run: threads on this machine (the default) or a Ray cluster.

Both are :class:`concurrent.futures.Executor` s: ``submit(fn, *args)`` returns a future.
The runners that own the journal, the retries and the progress display (``grade``,
``verify``) are the same for both, so the records are too. ``slots`` is how many pieces of
work to keep in flight.
"""

from __future__ import annotations

from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass


@dataclass
class Pool:
    executor: Executor
    slots: int
    """Work kept in flight at once."""
    where: str
    """For messages: ``local`` or the Ray address."""

    def shutdown(self) -> None:
        """Stop; work not started is dropped (it was never journaled)."""
        self.executor.shutdown(wait=False, cancel_futures=True)


def local_pool(workers: int) -> Pool:
    """``workers`` at once on this machine's Docker engine (two containers per trial)."""
    workers = max(1, workers)
    return Pool(ThreadPoolExecutor(max_workers=workers, thread_name_prefix="termgrade"),
                workers, "local")


def make_pool(workers: int, ray_address: str | None = None) -> Pool:
    """A Ray pool when ``ray_address`` is given (``termgrade[ray]``), else a local one."""
    if ray_address is None:
        return local_pool(workers)
    from termgrade.pools.ray_executor import ray_pool

    return ray_pool(ray_address, workers)
