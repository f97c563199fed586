"""Execution pools: where many independent jobs run. :mod:`~termgrade.pools.pool` is the
pool the stages hand work to, :mod:`~termgrade.pools.executors` picks one (a thread pool
there, :mod:`~termgrade.pools.ray_executor` a Ray cluster), :mod:`~termgrade.pools.processes`
a process per core for CPU-bound work.

A pool runs callables; it knows nothing of the work (docs/architecture.md)."""
