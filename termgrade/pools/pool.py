"""The pool the stages hand work to: an executor, how much of it to keep in flight, and
where it runs. Every executor module builds one (:mod:`.executors`: threads here,
:mod:`.ray_executor`: a Ray cluster)."""

from __future__ import annotations

from concurrent.futures import Executor
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
