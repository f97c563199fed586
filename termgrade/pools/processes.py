"""CPU-bound work in a process per core, started as ``python -m termgrade.pools.processes``.

Not ``multiprocessing``: its ``spawn`` start re-runs the caller's main script in every
worker (a user script that verifies, then validates, without an ``if __name__ ==
"__main__"`` guard would verify again in each one), and ``fork`` copies whatever
threads hold (a progress display's console lock). A worker here is a fresh interpreter
that imports one function by name, reads its items as JSON on stdin and writes the
results as JSON on stdout; nothing of the caller's process goes along.

    results = map_in_workers("termgrade.audit.pipeline:check_tasks", items, workers=2)

The function takes a list of JSON values and returns a list of JSON values, one per
item, in order. Items are dealt round-robin into a few batches per worker, a process
each; results come back in the items' order.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from termgrade.core.errors import TermGradeError
from termgrade.core.settings import SETTINGS


def _resolve(name: str) -> Callable[[list[Any]], list[Any]]:
    module, _, function = name.partition(":")
    found: Callable[[list[Any]], list[Any]] = getattr(importlib.import_module(module), function)
    return found


BATCHES_PER_WORKER = 2


def default_workers() -> int:
    """``TERMGRADE_WORKERS`` when set (1: all in this process), else one per core."""
    return SETTINGS.workers or os.cpu_count() or 1


def _run(function: str, batch: list[Any], env: dict[str, str]) -> list[Any]:
    done = subprocess.run([sys.executable, "-m", "termgrade.pools.processes", function],
                          input=json.dumps(batch).encode(), capture_output=True, env=env,
                          check=False)
    if done.returncode != 0:
        raise TermGradeError(
            f"a worker of {function} failed (exit {done.returncode}): "
            f"{done.stderr.decode(errors='replace')[-2000:]}",
            fix="rerun with TERMGRADE_WORKERS=1 to see the error in this process")
    got: list[Any] = json.loads(done.stdout)
    return got


def map_in_workers(function: str, items: Sequence[Any], *, workers: int | None = None,
                   on_result: Callable[[int], None] | None = None,
                   batches_per_worker: int = BATCHES_PER_WORKER) -> list[Any]:
    """``function(items)`` computed by ``workers`` processes (default:
    :func:`default_workers`); ``on_result(n)`` is called as a worker's ``n`` results
    arrive. Each batch is a process: fewer batches start fewer interpreters (for work
    of many small, even items), more give progress more steps."""
    count = max(1, min(workers or default_workers(), len(items)))
    if count == 1:
        here_only = _resolve(function)(list(items))
        if on_result is not None:
            on_result(len(here_only))
        return here_only
    # A few batches per worker process: progress moves, and a slow batch is not alone.
    n_batches = min(len(items), count * max(1, batches_per_worker))
    parts = [list(range(i, len(items), n_batches)) for i in range(n_batches)]
    # The workers import the termgrade this process runs (a checkout, not only a wheel).
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    results: list[Any] = [None] * len(items)
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = {pool.submit(_run, function, [items[i] for i in part], env): part
                   for part in parts}
        for future in as_completed(futures):
            part = futures[future]
            got = future.result()
            for index, value in zip(part, got, strict=True):
                results[index] = value
            if on_result is not None:
                on_result(len(got))
    return results


def main() -> None:
    function = _resolve(sys.argv[1])
    items = json.loads(sys.stdin.buffer.read())
    sys.stdout.write(json.dumps(function(items)))


if __name__ == "__main__":
    main()
