"""An OpenAI-compatible chat endpoint on loopback, answered by a Python function.

``POST /v1/chat/completions`` calls ``reply(messages)`` for the assistant message to send
(``content`` and, for tool calls, ``tool_calls``); ``GET /v1/models`` lists the one model,
as the endpoint probe of ``termgrade grade`` asks. Token usage is estimated (4 characters
a token). It answers at once, so a benchmark's "model wait" is the HTTP round trip only.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOOPBACK = "127.0.0.1"
Messages = Sequence[dict[str, Any]]
Reply = Callable[[Messages], dict[str, Any]]
"""``reply(messages)`` -> the assistant message: ``{"content": ..., "tool_calls": [...]}``."""


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # a burst of concurrent trials does not wait on SYN retries
    daemon_threads = True


class LoopbackChat:
    """A context manager serving ``reply`` at ``url`` (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, reply: Reply, *, model: str = "benchmark-stand-in") -> None:
        self.reply = reply
        self.model = model
        self.requests = 0
        self._lock = threading.Lock()
        self._server = _Server((LOOPBACK, 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True, name="benchmark-chat")

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self._server.server_address[1]}/v1"

    def completion(self, request: dict[str, Any]) -> dict[str, Any]:
        """The ``chat.completion`` object answering ``request``."""
        with self._lock:
            self.requests += 1
            number = self.requests
        messages = list(request.get("messages") or [])
        message = {"role": "assistant", "content": None} | self.reply(messages)
        prompt, completion = _tokens(messages), _tokens(message)
        return {
            "id": f"chatcmpl-bench-{number}", "object": "chat.completion",
            "created": int(time.time()), "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": chat.model, "object": "model", "created": 0,
                         "owned_by": "benchmark"}]})
                else:
                    self._send(404, {"error": {"message": "not found", "code": 404}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found", "code": 404}})
                    return
                try:
                    self._send(200, chat.completion(json.loads(raw or b"{}")))
                except Exception as exc:  # a broken stand-in is the benchmark's bug: say so
                    self._send(500, {"error": {"message": f"stand-in failed: {exc!r}",
                                               "type": "InternalServerError", "code": 500}})

        return Handler

    def __enter__(self) -> LoopbackChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def assistant_turns(messages: Messages) -> int:
    """How many assistant messages the conversation already holds."""
    return sum(1 for m in messages if m.get("role") == "assistant")


def tool_call(turn: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI tool call."""
    return {"id": f"call_{turn}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def solution_command(script: str, path: str = "/tmp/solve.sh") -> str:
    """One bash command that writes ``script`` to ``path`` byte for byte and runs it (one
    command, because every ``bash`` call of the scaffold is a fresh shell)."""
    delimiter = "TERMGRADE_SOLVE_EOF"
    while delimiter in script:
        delimiter += "_"
    body = script if script.endswith("\n") else script + "\n"
    target = shlex.quote(path)
    return f"cat > {target} <<'{delimiter}'\n{body}{delimiter}\nbash {target}\n"


def replay_solutions(solutions: Iterable[tuple[str, str]]) -> Reply:
    """The bash-tool policy that replays a task's reference solution, then finishes.

    ``solutions`` pairs each task's instruction with its ``solve.sh``; the conversation's
    first user message picks the task. Turn 1 runs the script in one ``bash`` call; turn
    2 calls ``finish``.
    """
    by_instruction = {instruction.strip(): script for instruction, script in solutions}

    def reply(messages: Messages) -> dict[str, Any]:
        instruction = next(str(m["content"]) for m in messages if m["role"] == "user")
        turn = assistant_turns(messages)
        if turn == 0:
            command = solution_command(by_instruction[instruction.strip()])
            return {"content": "I will run the reference solution.",
                    "tool_calls": [tool_call(turn, "bash", {"command": command})]}
        return {"content": "Ran the reference solution.",
                "tool_calls": [tool_call(turn, "finish", {"summary": "Ran it."})]}

    return reply
