"""A client for any OpenAI-compatible chat-completions endpoint (vLLM's server, providers).

It sends one request and returns the response exactly as received, with its latency. It
retries what is the infrastructure's fault (429, 5xx, dropped connections, timeouts) with
backoff that obeys ``Retry-After``, and reports the seconds spent waiting so the caller can
keep them out of the trial's time budget. A context-length refusal is the model's limit,
not an outage: it raises :class:`ContextLengthError` at once. When the retries run out it
raises :class:`EndpointError`: the trial is lost to infrastructure, never scored. What
cannot heal is not retried for minutes: a malformed URL fails at once, and an endpoint
where nothing listens (connection refused, an unknown host) after :data:`CONNECT_TRIES`
tries; both are ``fatal`` (the run stops and says why).

One :class:`ChatClient` is shared by every trial of a process: it holds one connection pool
and bounds the requests in flight.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2

from termgrade.agent.errors import ContextLengthError, EndpointError, RequestRejected
from termgrade.agent.tokens import token_request
from termgrade.core.errors import OptionError
from termgrade.core.retry import RETRYABLE_STATUS, RetryEvent, RetryPolicy
from termgrade.core.settings import SETTINGS

CONTEXT_ERROR = re.compile(
    r"context[ _-]?length|maximum context|context window|too many tokens|prompt is too long"
    r"|input is too long|reduce the length", re.IGNORECASE)
DEFAULT_RETRY = RetryPolicy(attempts=8, base_s=1.0, max_s=60.0)
CONNECT_TRIES = 3
"""Tries of a request that finds nothing listening (connection refused, an unknown host)
before the endpoint is given up as down: seconds, not the minutes of the full policy."""

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def key_variable(given: str | None) -> str | None:
    """The variable an endpoint reads its key from, as ``--api-key-env`` names it.

    Not given: :data:`DEFAULT_KEY_ENV`, which may be unset (a local server needs no key);
    ``""``: no key at all. A variable named on purpose must be set here and not empty:
    a typo would otherwise send every request without a key."""
    if given is None:
        return DEFAULT_KEY_ENV
    if not given:
        return None
    if not SETTINGS.api_key(given):
        raise OptionError(f"--api-key-env {given}: the variable {given} is not set (or is "
                          "empty) in this environment",
                          fix=f"export {given}=<the key>, name the variable that holds the "
                          "key, or pass --api-key-env '' for an endpoint that needs none")
    return given


@dataclass(frozen=True)
class Endpoint:
    """Where the model is served. Picklable: each worker process opens its own client."""

    base_url: str
    """e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended)."""
    model: str
    api_key_env: str | None = "OPENAI_API_KEY"
    """Environment variable holding the API key (read at request time, never recorded)."""
    request_timeout_s: float = 600.0
    max_in_flight: int = 16
    """Requests in flight at once, per process."""
    extra_body: tuple[tuple[str, Any], ...] = ()
    """Extra request fields (e.g. ``("top_p", 0.95)``), sent as given."""
    token_detail: str | None = None
    """``grade --logprobs`` / ``--token-ids``: ask for each sampled token's log probability
    (and id) and record them (:mod:`termgrade.agent.tokens`); None asks for neither. Not
    part of the scaffold's digest: it changes what is recorded, not what is sampled."""

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def headers(self) -> dict[str, str]:
        key = SETTINGS.api_key(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}


@dataclass(frozen=True)
class Completion:
    response: dict[str, Any]
    """The response body exactly as received."""
    latency_s: float
    """Seconds of the request that succeeded."""
    waited_s: float
    """Seconds spent on failed tries and backoff before it (kept out of time budgets)."""
    retries: int

    @property
    def message(self) -> dict[str, Any]:
        choices = self.response.get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            raise EndpointError(f"the response has no choices: {str(self.response)[:300]}")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise EndpointError(f"the response has no message: {str(self.response)[:300]}")
        return message

    def usage(self, key: str) -> int | None:
        usage = self.response.get("usage") or {}
        if key == "cached_tokens":
            value = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        else:
            value = usage.get(key)
        return int(value) if isinstance(value, int | float) else None


@dataclass
class ClientStats:
    requests: int = 0
    retries: int = 0
    waited_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class ChatClient:
    """Thread-safe; one per endpoint and process (see :func:`client_for`)."""

    def __init__(self, endpoint: Endpoint, *, retry: RetryPolicy = DEFAULT_RETRY,
                 on_retry: Callable[[RetryEvent], None] | None = None) -> None:
        self.endpoint = endpoint
        self.retry = retry
        self.on_retry = on_retry
        self.stats = ClientStats()
        self._gate = threading.BoundedSemaphore(max(1, endpoint.max_in_flight))
        self._http = httpx2.Client(
            timeout=httpx2.Timeout(endpoint.request_timeout_s, connect=30.0),
            limits=httpx2.Limits(max_connections=max(1, endpoint.max_in_flight)),
            trust_env=not is_loopback(endpoint.base_url))

    def close(self) -> None:
        self._http.close()

    def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]],
                 params: dict[str, Any] | None = None) -> Completion:
        # No tools (plain text generation): neither field is sent, as providers refuse a
        # tool_choice without tools.
        offered = {"tools": list(tools), "tool_choice": "auto"} if tools else {}
        body = {"model": self.endpoint.model, "messages": list(messages), **offered,
                **token_request(self.endpoint.token_detail),
                **dict(self.endpoint.extra_body), **(params or {})}
        payload = json.dumps(body).encode("utf-8")
        began = time.monotonic()
        unreachable = 0
        for attempt in range(1, self.retry.attempts + 1):
            with self._gate:
                sent = time.monotonic()
                problem, status, after = self._send(payload)
                if isinstance(problem, dict):
                    with self.stats.lock:
                        self.stats.requests += 1
                    return Completion(problem, time.monotonic() - sent, sent - began,
                                      attempt - 1)
            unreachable = unreachable + 1 if problem.startswith("ConnectError") else 0
            if unreachable >= CONNECT_TRIES:
                raise EndpointError(f"{self.endpoint.url}: nothing answers after {unreachable} "
                                    f"tries: {problem} (check that the server is up and "
                                    "--base-url is right)", fatal=True,
                                    retries=attempt - 1)
            if attempt == self.retry.attempts:
                raise EndpointError(f"{self.endpoint.url}: gave up after {attempt} tries: "
                                    f"{problem}", retries=attempt - 1)
            pause = self.retry.wait(attempt, after)
            with self.stats.lock:
                self.stats.retries += 1
                self.stats.waited_s += pause
            if self.on_retry is not None:
                self.on_retry(RetryEvent(self.endpoint.url, attempt, status, pause))
            self.retry.sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, payload: bytes) -> tuple[dict[str, Any] | str, int | None, float | None]:
        """(response body, status, retry-after) on success; (why, status, retry-after) for
        a failure worth retrying. Raises for one that is not."""
        headers = {"Content-Type": "application/json", **self.endpoint.headers()}
        try:
            reply = self._http.post(self.endpoint.url, content=payload, headers=headers)
        except (httpx2.UnsupportedProtocol, httpx2.InvalidURL) as exc:
            raise EndpointError(f"{self.endpoint.url}: not a usable URL ({exc}); write "
                                "--base-url in full, e.g. http://127.0.0.1:8000/v1",
                                fatal=True) from None
        except httpx2.TransportError as exc:
            return f"{type(exc).__name__}: {exc}", None, None
        status = reply.status_code
        if status == 200:
            try:
                data = reply.json()
            except ValueError:
                return f"200 with a body that is not JSON: {reply.text[:200]!r}", status, None
            if isinstance(data, dict):
                return data, status, None
            return f"200 with a JSON body that is not an object: {reply.text[:200]!r}", 200, None
        text = reply.text[:1000]
        if status in (400, 413) and CONTEXT_ERROR.search(text):
            raise ContextLengthError(text)
        if status in RETRYABLE_STATUS:
            return f"HTTP {status}: {text[:300]}", status, _retry_after(reply)
        if status in (400, 422):
            raise RequestRejected(f"HTTP {status}: {text[:500]}")
        raise EndpointError(f"{self.endpoint.url}: HTTP {status}: {text[:500]} (not retried: "
                            "check --model, --base-url and the API key)", fatal=True)


def _retry_after(reply: httpx2.Response) -> float | None:
    value = reply.headers.get("Retry-After", "").strip()
    try:
        return float(value) if value else None
    except ValueError:
        return None


def is_loopback(url: str) -> bool:
    host = httpx2.URL(url).host
    return host in ("127.0.0.1", "localhost", "::1")


_CLIENTS: dict[Endpoint, ChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


def client_for(endpoint: Endpoint) -> ChatClient:
    """The process's one client for ``endpoint``."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(endpoint)
        if client is None:
            client = _CLIENTS[endpoint] = ChatClient(endpoint)
        return client
