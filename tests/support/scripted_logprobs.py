"""Token detail for the scripted endpoints, in OpenAI's shape (and vLLM's extras).

A scripted reply has no real tokens: its text is cut into pieces of up to four characters
(the stand-ins' token estimate), each with a made-up but fixed id and log probability
(full float64 precision, so a lossy copy shows). Served only when the request asks, as a
server does: ``logprobs: true`` gives ``choices[0].logprobs.content``, vLLM's
``return_token_ids: true`` adds ``choices[0].token_ids``, and ``return_tokens_as_token_ids``
writes each token as ``token_id:N``. ``revisions`` are top-level fields of every answer
(``model_revision``, ``tokenizer_revision``, ``chat_template_digest``) for a server that
states them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

PIECE = 4
VOCAB = 151_000


def sampled_text(message: dict[str, Any]) -> str:
    """What a model would have generated for ``message``: its text, then its calls."""
    calls = [json.dumps({"name": c["function"]["name"], "arguments": c["function"]["arguments"]})
             for c in message.get("tool_calls") or []]
    return "".join([message.get("content") or "", *calls]) or " "


def _digest(text: str, index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{index}:{text}".encode()).digest()[:8], "big")


def token_detail(message: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """The choice fields ``request`` asked for about ``message`` (empty if none)."""
    if not request.get("logprobs"):
        return {}
    text = sampled_text(message)
    pieces = [text[i:i + PIECE] for i in range(0, len(text), PIECE)]
    ids = [_digest(p, i) % VOCAB for i, p in enumerate(pieces)]
    logprobs = [-(_digest(p, -i) % 10**9) / 3.7e8 for i, p in enumerate(pieces)]
    as_ids = bool(request.get("return_tokens_as_token_ids"))
    content = [{"token": f"token_id:{ids[i]}" if as_ids else p, "logprob": logprobs[i],
                "bytes": list(p.encode()), "top_logprobs": []}
               for i, p in enumerate(pieces)]
    detail: dict[str, Any] = {"logprobs": {"content": content, "refusal": None}}
    if request.get("return_token_ids"):
        detail["token_ids"] = ids
    return detail
