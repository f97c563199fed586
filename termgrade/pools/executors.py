"""Where trials run: threads on this machine (the default) or a Ray cluster.

Both are :class:`concurrent.futures.Executor` s: ``submit(fn, *args)`` returns a future.
The runners that own the journal, the retries and the progress display (``grade``,
``verify``) are the same for both, so the records are too. ``slots`` is how many pieces of
work to keep in flight. :class:`Pool` is defined in :mod:`.pool` (the Ray executor builds
one too) and importable from here; :func:`make_pool` picks the executor.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from termgrade.pools.pool import Pool as Pool
from termgrade.pools.ray_executor import ray_pool


def local_pool(workers: int) -> Pool:
    """``workers`` at once on this machine's Docker engine (two containers per trial)."""
    workers = max(1, workers)
    return Pool(ThreadPoolExecutor(max_workers=workers, thread_name_prefix="termgrade"),
                workers, "local")


def make_pool(workers: int, ray_address: str | None = None) -> Pool:
    """A Ray pool when ``ray_address`` is given (``termgrade[ray]``), else a local one."""
    if ray_address is None:
        return local_pool(workers)
    return ray_pool(ray_address, workers)
