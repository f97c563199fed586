"""Retry a Hub call with exponential backoff on 429, 5xx and dropped connections.

``huggingface_hub`` already retries some of its GETs and LFS uploads, but not the commit
POST, tag, branch or pull-request calls: those go through here. Retrying a commit is safe
because every commit we send names its ``parent_commit``: if a "failed" commit had in fact
landed, the retry gets a 412 and the caller re-plans against the new head.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TypeVar

import httpx2
from huggingface_hub.errors import HfHubHTTPError

from termgrade.core.retry import RETRYABLE_STATUS, RetryEvent, RetryPolicy

T = TypeVar("T")


def _chain(exc: BaseException) -> list[BaseException]:
    """The error and its causes (LFS upload failures arrive wrapped in a RuntimeError)."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def status_of(exc: BaseException) -> int | None:
    """The HTTP status behind an error, looking through wrapping exceptions."""
    for err in _chain(exc):
        if isinstance(err, HfHubHTTPError) and err.response is not None:
            return int(err.response.status_code)
    return None


def is_hub_failure(exc: BaseException) -> bool:
    """An HTTP error status or a dropped connection, possibly wrapped."""
    return status_of(exc) is not None or any(isinstance(err, httpx2.TransportError)
                                             for err in _chain(exc))


def unresolvable(exc: BaseException) -> bool:
    """The Hub's host name does not resolve (offline, or a mistyped endpoint): retrying
    cannot heal it."""
    return any(isinstance(err, socket.gaierror) for err in _chain(exc))


def is_retryable(exc: BaseException) -> bool:
    if unresolvable(exc):
        return False
    if any(isinstance(err, httpx2.TransportError) for err in _chain(exc)):
        return True
    return status_of(exc) in RETRYABLE_STATUS


def _retry_after(exc: BaseException) -> float | None:
    for err in _chain(exc):
        if isinstance(err, HfHubHTTPError) and err.response is not None:
            value = err.response.headers.get("Retry-After", "")
            return float(value) if value.strip().isdigit() else None
    return None


def call_with_retries(what: str, func: Callable[[], T], policy: RetryPolicy, *,
                      on_retry: Callable[[RetryEvent], None] | None = None,
                      before_retry: Callable[[], T | None] | None = None) -> T:
    """``func()``, retried on retryable errors; other errors propagate at once.

    ``before_retry`` runs before each new try and may return a result that makes the retry
    unnecessary (e.g. the pull request the failed call did create after all).
    """
    wait = policy.base_s
    for attempt in range(1, policy.attempts + 1):
        try:
            return func()
        except Exception as exc:
            if attempt == policy.attempts or not is_retryable(exc):
                raise
            after = _retry_after(exc)
            pause = min(policy.max_s, wait if after is None else after)
            if on_retry is not None:
                on_retry(RetryEvent(what, attempt, status_of(exc), pause))
            policy.sleep(pause)
            wait = min(policy.max_s, wait * 2)
            if before_retry is not None and (found := before_retry()) is not None:
                return found
    raise AssertionError("unreachable")  # pragma: no cover
