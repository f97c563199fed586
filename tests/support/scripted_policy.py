"""A scripted token policy: stands in for verl's vLLM server manager on a CPU machine.

It answers ``generate(prompt_ids, sampling_params)`` as the server does (a
``TokenOutput`` of response token ids), with the next of a fixed list of replies, each
tokenized by the test's tokenizer and ended by the end-of-turn token. It honours
``max_tokens`` as vLLM does (truncating), and records every request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def bash_call(command: str) -> str:
    import json

    return ('<tool_call>\n' + json.dumps({"name": "bash", "arguments": {"command": command}})
            + '\n</tool_call>')


FINISH = '<tool_call>\n{"name": "finish", "arguments": {}}\n</tool_call>'


class ScriptedPolicy:
    """Not a dataclass: ``hydra.utils.instantiate`` would turn one into a config node."""

    def __init__(self, tokenizer: Any, replies: list[str],
                 on_request: Callable[[], None] | None = None) -> None:
        self.tokenizer = tokenizer
        self.replies = replies
        self.on_request = on_request
        """Called at each request (a test looks at the world mid-episode)."""
        self.requests: list[dict[str, Any]] = []
        self.generated: list[list[int]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int],
                       sampling_params: dict[str, Any], **_: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        if self.on_request is not None:
            self.on_request()
        turn = len(self.requests)
        self.requests.append({"prompt_ids": list(prompt_ids), **sampling_params})
        text = self.replies[min(turn, len(self.replies) - 1)]
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        ids = [*ids, self.tokenizer.eos_token_id][: int(sampling_params["max_tokens"])]
        self.generated.append(ids)
        return TokenOutput(token_ids=ids, log_probs=[-0.25] * len(ids), stop_reason="completed")
