"""Before any container starts: is the endpoint one a trial can use?

Two cheap requests find in seconds what trials would otherwise find after minutes of
retries each: ``GET /models`` (is anything listening, is the key accepted, is the model
served) and a chat completion of one token that offers the scaffold's tools (does the
server accept tool calls; a scaffold without tools, such as terminus-2, offers none).
Each problem raises :class:`EndpointUnusableError` naming the URL and the fix. What a
probe cannot decide (a 5xx or 429, a provider without ``/models``) is left to the run,
whose retries handle it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx2

from termgrade.agent.client import Endpoint, is_loopback
from termgrade.agent.errors import EndpointUnusableError
from termgrade.agent.scaffold import TOOLS
from termgrade.agent.tokens import token_request

PROBE_TIMEOUT = httpx2.Timeout(60.0, connect=10.0)
_URL_FIX = "pass the API root with its scheme, e.g. --base-url http://127.0.0.1:8000/v1"
_KEY_FIX = "set the API key in the variable --api-key-env names (default OPENAI_API_KEY)"


def check_base_url(base_url: str) -> None:
    """Raise unless ``base_url`` is an absolute http(s) URL with a host."""
    scheme, sep, _rest = base_url.partition("://")
    if not sep:
        raise EndpointUnusableError(base_url, "--base-url has no http:// or https:// scheme",
                                    fix=f"write it in full, e.g. --base-url http://{base_url}")
    try:
        host = httpx2.URL(base_url).host
    except (httpx2.InvalidURL, ValueError) as exc:
        raise EndpointUnusableError(base_url, f"--base-url is not a URL ({exc})",
                                    fix=_URL_FIX) from None
    if scheme.lower() not in ("http", "https") or not host:
        raise EndpointUnusableError(base_url, "--base-url is not an http(s) URL with a host",
                                    fix=_URL_FIX)


def probe_endpoint(endpoint: Endpoint,
                   tools: Sequence[dict[str, Any]] = TOOLS) -> None:
    """Raise :class:`EndpointUnusableError` when no trial could use ``endpoint`` with
    ``tools`` (the scaffold's: the bash tool-calling one's unless told)."""
    check_base_url(endpoint.base_url)
    with httpx2.Client(timeout=PROBE_TIMEOUT,
                       trust_env=not is_loopback(endpoint.base_url)) as http:
        _check_models(http, endpoint)
        _check_tools(http, endpoint, tools)


def _request(http: httpx2.Client, endpoint: Endpoint, method: str, url: str,
             body: dict[str, Any] | None = None) -> httpx2.Response:
    headers = {"Content-Type": "application/json", **endpoint.headers()}
    try:
        return http.request(method, url, headers=headers,
                            content=None if body is None else json.dumps(body).encode())
    except httpx2.TimeoutException as exc:
        raise EndpointUnusableError(url, f"no answer in time ({type(exc).__name__})",
                                    fix="check that the server is up and --base-url is "
                                    "right") from None
    except httpx2.TransportError as exc:
        raise EndpointUnusableError(url, f"cannot connect ({exc})",
                                    fix="start the model server, or correct --base-url "
                                    "(e.g. http://127.0.0.1:8000/v1)") from None


def _refused_key(url: str, reply: httpx2.Response) -> EndpointUnusableError:
    return EndpointUnusableError(url, f"refuses every request: HTTP {reply.status_code}: "
                                 f"{reply.text[:300]}", fix=_KEY_FIX)


def _check_models(http: httpx2.Client, endpoint: Endpoint) -> None:
    url = endpoint.base_url.rstrip("/") + "/models"
    reply = _request(http, endpoint, "GET", url)
    if reply.status_code in (401, 403):
        raise _refused_key(url, reply)
    if reply.status_code != 200:
        return  # a provider without /models: the chat request decides
    try:
        data = reply.json().get("data")
    except (ValueError, AttributeError):
        return
    served = [str(m.get("id")) for m in data if isinstance(m, dict)] \
        if isinstance(data, list) else []
    if served and endpoint.model not in served:
        shown = ", ".join(served[:10]) + (f" and {len(served) - 10} more"
                                          if len(served) > 10 else "")
        raise EndpointUnusableError(
            url, f"does not serve model {endpoint.model!r}; it serves: {shown}",
            fix=f"pass --model {served[0]} (or another model it serves)")


def _check_tools(http: httpx2.Client, endpoint: Endpoint,
                 tools: Sequence[dict[str, Any]]) -> None:
    offered = {"tools": list(tools), "tool_choice": "auto"} if tools else {}
    asked = token_request(endpoint.token_detail)  # a server refusing them fails here, once
    body: dict[str, Any] = {
        "model": endpoint.model, "messages": [{"role": "user", "content": "Say OK."}],
        **offered, **asked, **dict(endpoint.extra_body), "max_tokens": 1}
    reply = _request(http, endpoint, "POST", endpoint.url, body)
    if reply.status_code == 400 and "max_tokens" in reply.text:
        body.pop("max_tokens")  # a provider that wants max_completion_tokens instead
        reply = _request(http, endpoint, "POST", endpoint.url, body)
    status, text = reply.status_code, reply.text[:500]
    if status in (401, 403):
        raise _refused_key(endpoint.url, reply)
    if tools and status in (400, 422) and "tool" in text.lower():
        raise EndpointUnusableError(
            endpoint.url, f"does not accept tool calls (HTTP {status}: {text})",
            fix="serve the model with tool calling on (vLLM: --enable-auto-tool-choice "
            "--tool-call-parser NAME); the scaffold needs it")
    if asked and status in (400, 422) and ("logprob" in text or "token_id" in text):
        raise EndpointUnusableError(
            endpoint.url, f"refuses the token detail asked for (HTTP {status}: {text})",
            fix="drop --token-ids (vLLM's return_token_ids: other servers may refuse it), "
            "or --logprobs if the server gives no logprobs")
    if status in (400, 404, 405, 422):
        raise EndpointUnusableError(
            endpoint.url, f"refuses a one-turn chat request for model {endpoint.model!r} "
            f"(HTTP {status}: {text})",
            fix="check --model (the name the server serves) and --base-url (the API root, "
            "ending in /v1)")
    if status == 200:
        try:
            parsed = reply.json()
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict) or not isinstance(parsed.get("choices"), list):
            raise EndpointUnusableError(
                endpoint.url, f"answers with something that is not a chat completion: "
                f"{text[:200]!r}", fix="point --base-url at an OpenAI-compatible API root "
                "(e.g. http://127.0.0.1:8000/v1)")
