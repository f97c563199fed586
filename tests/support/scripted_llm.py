"""Test stand-in: a scripted OpenAI-compatible chat model, served on the loopback interface.

It lets Harbor's real Terminus-2 agent run end to end with no model behind it: every
``POST .../chat/completions`` is answered with the next reply of a fixed script, so the
trial directories it produces (``agent/trajectory.json``, token counts, per-test verdicts)
are real Harbor output. It is a stand-in, never a model: the replies do not depend on
what the terminal showed.

The reply is chosen by how many assistant messages the request already carries, so the
server keeps no per-conversation state and concurrent trials each follow the script from
the start. Token usage is estimated (4 characters per token); the prompt minus its last
message is reported as cached, as a provider with prefix caching would.

Run it by hand from the checkout's root (Ctrl-C stops it)::

    python -m tests.support.scripted_llm --script word-frequency --port 8765
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.scripted_logprobs import token_detail

LOOPBACK = "127.0.0.1"
STAND_IN_MODEL = "scripted-stand-in"


def terminus_reply(analysis: str, plan: str, commands: Sequence[tuple[str, float]],
                   *, task_complete: bool = False) -> str:
    """One Terminus-2 JSON reply: analysis, plan, keystroke batches, completion flag."""
    body = {
        "analysis": analysis,
        "plan": plan,
        "commands": [{"keystrokes": keys, "duration": duration} for keys, duration in commands],
        "task_complete": task_complete,
    }
    return json.dumps(body, indent=2)


_WORDFREQ_SCRIPT = """\
cat > /app/wordfreq <<'EOF'
#!/usr/bin/env bash
f=${1:-}; n=${2:-10}
[ -n "$f" ] && [ -f "$f" ] || { echo "wordfreq: no such file: $f" >&2; exit 2; }
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ] || { echo "wordfreq: bad N: $n" >&2; exit 2; }
LC_ALL=C tr -cs 'A-Za-z' '\\n' < "$f" | LC_ALL=C tr 'A-Z' 'a-z' | grep -v '^$' \\
  | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 | head -n "$n" \\
  | awk '{print $1" "$2}'
exit 0
EOF
"""

WORD_FREQUENCY_REPLIES: tuple[str, ...] = (
    terminus_reply(
        "A fresh shell in /app. Nothing is written yet.",
        "Look at the sample input first.",
        [("ls -la /app /app/data\n", 0.1), ("head -3 /app/data/sample.txt\n", 0.1)],
    ),
    # Deliberately not JSON: Terminus-2 records a parse error and asks again.
    "I will now write the script.",
    terminus_reply(
        "The sample is plain English text. Write the tool with tr, sort and uniq.",
        "Write /app/wordfreq with a heredoc, make it executable, try it on the sample.",
        [(_WORDFREQ_SCRIPT, 0.5), ("chmod +x /app/wordfreq\n", 0.1),
         ("/app/wordfreq /app/data/sample.txt 3\n", 0.5)],
    ),
    terminus_reply(
        "The tool prints counts and words, most frequent first.",
        "The task is done.",
        [],
        task_complete=True,
    ),
    terminus_reply("Confirmed.", "Mark the task complete.", [], task_complete=True),
)
"""Solves environments/word-frequency in four valid turns and one unparsable one."""

SCRIPTS: dict[str, tuple[str, ...]] = {"word-frequency": WORD_FREQUENCY_REPLIES}


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


class ScriptedLLM:
    """An OpenAI-compatible chat endpoint that replays ``replies``; a context manager.

    ``url`` is the base URL to hand to a client (``.../v1``); ``requests`` holds every
    request body received, in order.
    """

    def __init__(self, replies: Sequence[str], *, model: str = STAND_IN_MODEL,
                 host: str = LOOPBACK, port: int = 0, logprobs: bool = False) -> None:
        if not replies:
            raise ValueError("a scripted model needs at least one reply")
        self.replies = tuple(replies)
        self.model = model
        self.logprobs = logprobs
        """Answer ``logprobs`` (and vLLM's token-id extras) when asked
        (:mod:`tests.support.scripted_logprobs`); False: ignore them, as a server without."""
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"

    def reply_for(self, messages: Sequence[dict[str, Any]]) -> str:
        turn = sum(1 for message in messages if message.get("role") == "assistant")
        return self.replies[min(turn, len(self.replies) - 1)]

    def completion(self, request: dict[str, Any]) -> dict[str, Any]:
        messages: list[dict[str, Any]] = list(request.get("messages") or [])
        with self._lock:
            self.requests.append(request)
            n = len(self.requests)
        content = self.reply_for(messages)
        prompt = sum(estimate_tokens(_text(m.get("content"))) for m in messages)
        cached = sum(estimate_tokens(_text(m.get("content"))) for m in messages[:-1])
        completion = estimate_tokens(content)
        return {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content},
                         **(token_detail({"content": content}, request)
                            if self.logprobs else {})}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": cached}},
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    body = {"object": "list",
                            "data": [{"id": llm.model, "object": "model", "owned_by": "scripted"}]}
                    self._send(200, json.dumps(body).encode(), "application/json")
                else:
                    self._send(404, b'{"error": "not found"}', "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, b'{"error": "body is not JSON"}', "application/json")
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": "not found"}', "application/json")
                    return
                answer = llm.completion(request)
                if request.get("stream"):
                    self._send(200, _as_stream(answer), "text/event-stream")
                else:
                    self._send(200, json.dumps(answer).encode(), "application/json")

        return Handler

    def start(self) -> ScriptedLLM:
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True, name="scripted-llm")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _as_stream(answer: dict[str, Any]) -> bytes:
    """The same completion as two server-sent-event chunks and ``[DONE]``."""
    message = answer["choices"][0]["message"]
    base = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    first = base | {"choices": [{"index": 0, "finish_reason": None,
                                 "delta": {"role": "assistant", "content": message["content"]}}]}
    last = base | {"choices": [{"index": 0, "finish_reason": "stop", "delta": {}}],
                   "usage": answer["usage"]}
    events = [json.dumps(first), json.dumps(last), "[DONE]"]
    return "".join(f"data: {event}\n\n" for event in events).encode()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Serve a scripted stand-in chat model; "
                                     "prints its base URL, then serves until interrupted.")
    parser.add_argument("--script", choices=sorted(SCRIPTS), default="word-frequency")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port.")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    server = ScriptedLLM(SCRIPTS[args.script], port=args.port).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
