"""How long to wait between tries of a call that failed for a reason worth retrying.

One definition for every client TermGrade talks to (the Hub, model endpoints): tries in
all, a first wait that doubles, and a cap that a server's ``Retry-After`` obeys too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""HTTP statuses worth another try: timeouts, rate limits, server errors."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6
    """Tries in all, the first included."""
    base_s: float = 2.0
    """Wait before the second try; doubles each time."""
    max_s: float = 60.0
    """Longest wait between tries (a server's Retry-After is capped to it too)."""
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def wait(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed try number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(self.max_s, max(0.0, retry_after))
        return min(self.max_s, self.base_s * 2.0 ** (attempt - 1))


@dataclass(frozen=True)
class RetryEvent:
    what: str
    attempt: int
    status: int | None
    wait_s: float
