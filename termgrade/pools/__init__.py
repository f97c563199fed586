"""Execution pools: where many independent jobs run. :mod:`~termgrade.pools.executors` is the
pool interface the stages hand work to (a thread pool here, :mod:`~termgrade.pools.ray_executor`
a Ray cluster), :mod:`~termgrade.pools.processes` a process per core for CPU-bound work.

A pool runs callables; it knows nothing of the work (docs/architecture.md)."""
