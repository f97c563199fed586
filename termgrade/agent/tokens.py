"""Token-level turns (``grade --logprobs``): what to ask an OpenAI-compatible endpoint for,
and what of its answer a trial records (:class:`~termgrade.records.trial.TokenTurn`).

Asked (:func:`token_request`):

* ``logprobs``: OpenAI's ``logprobs: true, top_logprobs: 0``: each sampled token's text and
  log probability (``choices[0].logprobs.content[]``), which OpenAI, vLLM, SGLang and most
  providers return;
* ``token-ids``: those, and vLLM's ``return_token_ids: true`` (the sampled ids as
  ``choices[0].token_ids``). A server that does not know the field may refuse the request:
  ask for it only of a vLLM server (or pass ``return_tokens_as_token_ids`` yourself: tokens
  written ``token_id:N`` are read as ids too).

Read (:func:`token_turn`): nothing is required. Each part the response lacks, or gives in
a shape other than OpenAI's, is null, never an error: a turn then records only what the
endpoint said (at least its ``finish_reason``). The prompt's ids (vLLM's
``prompt_token_ids``) are not kept: the whole conversation again on every turn.
"""

from __future__ import annotations

import re
from typing import Any

from termgrade.records.trial import TokenTurn

TOKEN_DETAILS = ("logprobs", "token-ids")
"""What ``Endpoint.token_detail`` may ask for (None: nothing more than the reply)."""

REVISION_FIELDS = ("model_revision", "tokenizer_revision", "chat_template_digest")
"""Top-level response fields a server may state them in (none is standard): recorded as
given when they are text."""

_ID_TOKEN = re.compile(r"token_id:(\d+)")


def token_request(detail: str | None) -> dict[str, Any]:
    """The request fields that ask for ``detail`` (one of :data:`TOKEN_DETAILS`)."""
    if detail is None:
        return {}
    if detail not in TOKEN_DETAILS:
        raise ValueError(f"token detail {detail!r}: one of {', '.join(TOKEN_DETAILS)}")
    asked: dict[str, Any] = {"logprobs": True, "top_logprobs": 0}
    if detail == "token-ids":
        asked["return_token_ids"] = True
    return asked


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _content(choice: dict[str, Any]) -> list[dict[str, Any]] | None:
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content:
        return None
    if not all(isinstance(entry, dict) for entry in content):
        return None
    return content


def _tokens(content: list[dict[str, Any]] | None) -> list[str] | None:
    if content is None:
        return None
    tokens = [entry.get("token") for entry in content]
    return [str(t) for t in tokens] if all(isinstance(t, str) for t in tokens) else None


def _logprobs(content: list[dict[str, Any]] | None) -> list[float] | None:
    if content is None:
        return None
    values = [entry.get("logprob") for entry in content]
    numbers = [float(v) for v in values
               if isinstance(v, int | float) and not isinstance(v, bool)]
    return numbers if len(numbers) == len(values) else None


def _ids(choice: dict[str, Any], tokens: list[str] | None) -> list[int] | None:
    given = choice.get("token_ids")
    if isinstance(given, list) and given and all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in given):
        return list(given)
    if tokens:
        matches = [_ID_TOKEN.fullmatch(t) for t in tokens]
        if all(matches):
            return [int(m.group(1)) for m in matches if m is not None]
    return None


def _same_length(*lists: list[Any] | None) -> bool:
    lengths = {len(x) for x in lists if x is not None}
    return len(lengths) <= 1


def token_turn(response: dict[str, Any], turn: int, message_index: int | None) -> TokenTurn:
    """What ``response`` (a chat completion as received) says of the tokens of its first
    choice; ``message_index``: where its assistant message is in the trial's messages."""
    choices = response.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(
        choices[0], dict) else {}
    content = _content(choice)
    tokens = _tokens(content)
    logprobs = _logprobs(content)
    ids = _ids(choice, tokens)
    if not _same_length(tokens, logprobs):  # not OpenAI's shape: keep neither
        tokens = logprobs = None
    if not _same_length(tokens, logprobs, ids):
        ids = None
    return TokenTurn(
        turn=turn, message_index=message_index,
        finish_reason=_text(choice.get("finish_reason")),
        tokens=tokens, token_ids=ids, logprobs=logprobs,
        model=_text(response.get("model")),
        system_fingerprint=_text(response.get("system_fingerprint")),
        **{name: _text(response.get(name)) for name in REVISION_FIELDS})


REPLACEMENT = "\ufffd"
"""What a decoder writes for a token that is part of a UTF-8 sequence (not comparable)."""


def tokenizer_disagreements(tokenizer: Any, turns: list[TokenTurn],
                            limit: int = 10) -> list[str]:
    """Where ``tokenizer`` (a ``transformers`` tokenizer: the one a run trains with) reads
    the recorded token ids otherwise than the server that sampled them: each id decoded
    alone should give the token text the server returned beside it. A token the server
    wrote as ``token_id:N``, or either side decoding to part of a UTF-8 character, is
    skipped; turns without both ids and texts say nothing. Empty: they agree (at most
    ``limit`` disagreements are named)."""
    found: list[str] = []
    for turn in turns:
        if not turn.token_ids or not turn.tokens or len(turn.token_ids) != len(turn.tokens):
            continue
        for position, (token_id, text) in enumerate(zip(turn.token_ids, turn.tokens,
                                                        strict=True)):
            if _ID_TOKEN.fullmatch(text) or REPLACEMENT in text:
                continue
            ours = tokenizer.decode([token_id])
            if REPLACEMENT not in ours and ours != text:
                found.append(f"turn {turn.turn}, token {position}: id {token_id} is "
                             f"{ours!r} here, {text!r} where it was sampled")
                if len(found) >= limit:
                    return found
    return found
