"""The scripted stand-in model: a real HTTP server on the loopback interface."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.support.scripted_llm import (
    WORD_FREQUENCY_REPLIES,
    ScriptedLLM,
    build_parser,
)


def _post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def test_replies_follow_the_number_of_assistant_turns() -> None:
    replies = ("first", "second")
    with ScriptedLLM(replies) as llm:
        url = f"{llm.url}/chat/completions"
        _, body0 = _post(url, {"messages": [{"role": "user", "content": "go"}]})
        history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "x"},
                   {"role": "user", "content": "more"}]
        _, body1 = _post(url, {"messages": history})
        _, body9 = _post(url, {"messages": history * 5})
    answers = [json.loads(b)["choices"][0]["message"]["content"] for b in (body0, body1, body9)]
    assert answers == ["first", "second", "second"]
    assert len(llm.requests) == 3


def test_usage_reports_prompt_completion_and_cached_tokens() -> None:
    with ScriptedLLM(["a" * 40]) as llm:
        messages = [{"role": "user", "content": "x" * 400},
                    {"role": "user", "content": "y" * 80}]
        _, body = _post(f"{llm.url}/chat/completions", {"messages": messages})
    usage = json.loads(body)["usage"]
    assert usage["prompt_tokens"] == 120
    assert usage["completion_tokens"] == 10
    assert usage["prompt_tokens_details"]["cached_tokens"] == 100


def test_streaming_requests_get_server_sent_events() -> None:
    with ScriptedLLM(["streamed"]) as llm:
        _, body = _post(f"{llm.url}/chat/completions",
                        {"messages": [{"role": "user", "content": "hi"}], "stream": True})
    events = [line[len("data: "):] for line in body.decode().splitlines()
              if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    assert json.loads(events[0])["choices"][0]["delta"]["content"] == "streamed"


def test_unknown_paths_are_404() -> None:
    with ScriptedLLM(["x"]) as llm, pytest.raises(urllib.error.HTTPError) as info:
        _post(f"{llm.url}/embeddings", {"input": "x"})
    assert info.value.code == 404


def test_word_frequency_script_is_valid_terminus_json_but_one_turn() -> None:
    parsed = []
    for reply in WORD_FREQUENCY_REPLIES:
        try:
            parsed.append(json.loads(reply))
        except json.JSONDecodeError:
            parsed.append(None)
    assert [p is None for p in parsed] == [False, True, False, False, False]
    assert parsed[-1] is not None and parsed[-1]["task_complete"] is True
    assert build_parser().parse_args(["--port", "0"]).script == "word-frequency"


def test_an_empty_script_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one reply"):
        ScriptedLLM([])
