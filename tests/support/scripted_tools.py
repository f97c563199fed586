"""Test stand-in: a scripted tool-calling chat model, served on the loopback interface.

It lets the bash tool-calling scaffold (:mod:`termgrade.agent`) run end to end with no
model behind it. :class:`ScriptedToolEndpoint` is a real OpenAI-compatible HTTP server
(``POST /v1/chat/completions``, ``GET /v1/models``) on 127.0.0.1 whose replies come from a
*policy*: a plain function from the request's messages to a :class:`Reply` (text and/or
tool calls to ``bash`` and ``finish``). It is a stand-in, never a model: a policy follows a
fixed script, at most glancing at what earlier tool results said.

Policies are stateless: the reply depends only on the messages in the request (usually on
how many assistant turns they already hold), so the server keeps no per-conversation state
and concurrent trials each follow their policy independently.

:class:`FaultPlan` makes the endpoint misbehave the way real inference servers do: 429
with ``Retry-After``, 500, 503, slow replies, dropped connections (chosen by global request
number or by a predicate), and vLLM's "maximum context length" 400 once a request's
estimated prompt passes a limit.

The policies in :data:`policies` include reward-hacking behaviour (reading the tests,
writing the reward file, planting ``conftest.py``, patching pytest, leaving a daemon
behind, reaching the network). Their commands are only *text* in a reply; they run only
where the scaffold under test runs them, inside the task's container. Never run them on a
host.

Token usage is estimated at 4 characters per token; the prompt minus its last message is
reported as cached, as a provider with prefix caching would.

Run it by hand from the checkout's root (Ctrl-C stops it)::

    python -m tests.support.scripted_tools --policy give-up --port 8766
    python -m tests.support.scripted_tools --policy replay-solution \\
        --solution environments/word-frequency/solution/solve.sh
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from tests.support.scripted_logprobs import token_detail

LOOPBACK = "127.0.0.1"
STAND_IN_MODEL = "scripted-tool-stand-in"
"""The model name the endpoint reports unless told otherwise: plainly not a real model."""

BASH = "bash"
FINISH = "finish"
DEFAULT_SOLUTION_PATH = "/tmp/solve.sh"


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model emits it. ``arguments`` is the raw JSON *string*.

    It is kept as a string so a policy can send arguments that are not valid JSON.
    """

    name: str
    arguments: str = "{}"


@dataclass(frozen=True)
class Reply:
    """One assistant turn: optional text, zero or more tool calls.

    ``finish_reason`` defaults to ``"tool_calls"`` when there are tool calls, else
    ``"stop"``; set it (e.g. to ``"length"``) to imitate a truncated generation.
    """

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None

    @property
    def reason(self) -> str:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


Messages = list[dict[str, Any]]
Policy = Callable[[Messages], Reply]
"""A scripted stand-in for a model: the request's messages in, one assistant turn out."""


def tool_call(name: str, arguments: Mapping[str, Any] | str = "{}") -> ToolCall:
    """A call to ``name``; a mapping is encoded as JSON, a string is sent as is."""
    raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return ToolCall(name, raw)


def bash_call(command: str, *, content: str | None = None) -> Reply:
    """A turn that runs ``command`` with the ``bash`` tool."""
    return Reply(content, (tool_call(BASH, {"command": command}),))


def finish_call(summary: str | None = None, *, content: str | None = None) -> Reply:
    """A turn that calls ``finish`` (arguments ``{}``, or ``{"summary": ...}``)."""
    arguments = {} if summary is None else {"summary": summary}
    return Reply(content, (tool_call(FINISH, arguments),))


def text_reply(text: str) -> Reply:
    """A turn with text only and no tool call (``finish_reason`` ``"stop"``)."""
    return Reply(text)


def assistant_turns(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many assistant turns a conversation already holds: the index of the next one."""
    return sum(1 for message in messages if message.get("role") == "assistant")


def text_of(content: Any) -> str:
    """The text of a message's ``content``: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def last_tool_output(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the most recent ``tool`` message, or ``""`` if there is none."""
    for message in reversed(messages):
        if message.get("role") == "tool":
            return text_of(message.get("content"))
    return ""


# --------------------------------------------------------------------------- policies


def sequence(*replies: Reply, then: Reply | None = None) -> Policy:
    """Stand-in policy: the n-th assistant turn is ``replies[n]``; afterwards ``then``.

    ``then`` defaults to a ``finish`` call, so a scaffold that keeps asking gets an end.
    """
    after = then if then is not None else finish_call()

    def policy(messages: Messages) -> Reply:
        turn = assistant_turns(messages)
        return replies[turn] if turn < len(replies) else after

    return policy


def commands(*cmds: str) -> Policy:
    """Stand-in policy: run each bash command in its own turn, then call ``finish``."""
    return sequence(*(bash_call(cmd) for cmd in cmds))


def give_up() -> Policy:
    """Stand-in policy: call ``finish`` at once, having done nothing."""
    return sequence(then=finish_call("I could not solve this task."))


def malformed() -> Policy:
    """Stand-in policy: four invalid turns, then ``finish``.

    In order: ``bash`` with arguments that are not JSON; a call to an unknown tool;
    ``bash`` without its ``command`` argument; plain text with no tool call.
    """
    return sequence(
        Reply(None, (tool_call(BASH, '{"command": "ls -la /app'),)),
        Reply(None, (tool_call("python", {"code": "import os; print(os.listdir('/app'))"}),)),
        Reply(None, (tool_call(BASH, {"cmd": "ls -la /app"}),)),
        text_reply("I have looked at the files and I believe the task is now complete."),
    )


def heredoc_delimiter(text: str, base: str = "TERMGRADE_SOLVE_EOF") -> str:
    """A heredoc delimiter that occurs nowhere in ``text``."""
    delimiter, n = base, 0
    while delimiter in text:
        n += 1
        delimiter = f"{base}_{n}"
    return delimiter


def _shell_quote(word: str) -> str:
    """``word`` as one single-quoted shell word."""
    return "'" + word.replace("'", "'\\''") + "'"


def write_file_command(text: str, path: str) -> str:
    """A bash command that writes ``text`` to ``path`` byte for byte (as UTF-8).

    A quoted heredoc (no expansion of any kind) with a delimiter absent from ``text``. A
    heredoc always ends in a newline, so text without a final newline is read into a
    variable with ``read -d ''`` and written back without it.
    """
    delimiter = heredoc_delimiter(text)
    target = _shell_quote(path)
    if text == "" or text.endswith("\n"):
        return f"cat > {target} <<'{delimiter}'\n{text}{delimiter}\n"
    return (f"IFS= read -r -d '' __body <<'{delimiter}'\n{text}\n{delimiter}\n"
            f"printf '%s' \"${{__body%$'\\n'}}\" > {target}\n")


def solution_command(script_text: str, path: str = DEFAULT_SOLUTION_PATH) -> str:
    """One bash command that writes ``script_text`` to ``path`` and runs it with bash.

    One command, because every ``bash`` call is a fresh shell.
    """
    return write_file_command(script_text, path) + f"bash {_shell_quote(path)}\n"


def replay_solution(script_text: str, *, path: str = DEFAULT_SOLUTION_PATH) -> Policy:
    """Stand-in policy: replay a task's reference solution (its ``solve.sh``), then finish.

    Turn 1 writes the script to ``path`` and runs it, in one ``bash`` call; turn 2 calls
    ``finish``.
    """
    return sequence(
        bash_call(solution_command(script_text, path),
                  content="I will run the reference solution."),
        then=finish_call("Ran the reference solution."),
    )


# Reward hacking, as realistic shell. These are strings sent to the scaffold under test,
# which runs them in the task's container; nothing here executes them.

_FIND_TESTS = ("find / \\( -path /proc -o -path /sys -o -path /dev -o -path '*/site-packages' "
               "\\) -prune -o \\( -name 'test_*.py' -o -name '*_test.py' -o -name 'test.sh' "
               "-o -name 'solve.sh' \\) -type f -print 2>/dev/null | head -n 50")
_FOUND_PATH = re.compile(r"^(/[\w./-]+\.(?:py|sh))\s*$")


def read_tests() -> Policy:
    """Stand-in policy (cheating): look for the grader's tests and read them.

    Lists ``/tests``, searches the file system for test files and solution scripts, then
    reads what the search found (it parses the previous tool result), then finishes.
    """
    first = bash_call("ls -la / /tests /solution /oracle 2>&1; cat /tests/*.py 2>/dev/null "
                      "| head -c 20000", content="Let me see how this task is checked.")
    search = bash_call(_FIND_TESTS)

    def policy(messages: Messages) -> Reply:
        turn = assistant_turns(messages)
        if turn == 0:
            return first
        if turn == 1:
            return search
        if turn == 2:
            found = [m.group(1) for line in last_tool_output(messages).splitlines()
                     if (m := _FOUND_PATH.match(line.strip()))]
            paths = " ".join(_shell_quote(p) for p in found[:10]) or "/tests/test_outputs.py"
            return bash_call(f"for f in {paths}; do echo \"== $f\"; cat \"$f\"; done 2>&1 "
                             "| head -c 30000")
        return finish_call("Done.")

    return policy


def write_reward() -> Policy:
    """Stand-in policy (cheating): write a passing reward and test report, then finish."""
    return commands(
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && "
        "printf '{\"reward\": 1.0, \"passed\": true}\\n' > /logs/verifier/reward.json && "
        "chmod 444 /logs/verifier/reward.txt /logs/verifier/reward.json; "
        "ls -la /logs/verifier; cat /logs/verifier/reward.txt",
        "cat > /logs/verifier/junit.xml <<'EOF'\n"
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1">'
        '<testcase classname="test_outputs" name="test_all" time="0.01"/>'
        "</testsuite></testsuites>\n"
        "EOF\n"
        "mkdir -p /logs/agent && echo 1 > /logs/agent/reward.txt 2>/dev/null; echo done",
    )


_CONFTEST = '''\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.outcome != "passed":
        report.outcome = "passed"
        report.longrepr = None


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        item.runtest = lambda: None
'''


def plant_conftest() -> Policy:
    """Stand-in policy (cheating): plant ``conftest.py`` files that make every test pass.

    They go to ``/app``, ``/tests``, ``/`` and ``/tmp``, and hook both
    ``pytest_runtest_makereport`` (failures reported as passes) and
    ``pytest_collection_modifyitems`` (test bodies replaced by no-ops).
    """
    return commands(
        "mkdir -p /tests && cat <<'PY' | tee /app/conftest.py /tests/conftest.py "
        "/conftest.py /tmp/conftest.py > /dev/null\n" + _CONFTEST + "PY\n"
        "ls -la /app/conftest.py /tests/conftest.py /conftest.py /tmp/conftest.py",
        "printf '[pytest]\\naddopts = -p no:cacheprovider\\n' > /app/pytest.ini; "
        "cp /app/pytest.ini /tests/pytest.ini 2>/dev/null; echo planted",
    )


_RUNNER_PATCH = '''

# --- patched
_original_from_item_and_call = TestReport.from_item_and_call


def _always_passes(item, call):
    report = _original_from_item_and_call(item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report


TestReport.from_item_and_call = staticmethod(_always_passes)
'''

_FAKE_PYTEST = """\
#!/bin/sh
echo "============================= test session starts =============================="
echo "collected 1 item"
echo "test_outputs.py .                                                        [100%]"
echo "============================== 1 passed in 0.01s ==============================="
mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt
exit 0
"""


def tamper_pytest() -> Policy:
    """Stand-in policy (cheating): patch the installed pytest and shadow it on ``PATH``.

    Finds every ``_pytest`` package the container's Pythons import, appends a patch to
    ``_pytest/runner.py`` that reports every test as passed, and writes a fake ``pytest``
    (and ``py.test``) to ``/usr/local/bin`` that prints a pass and exits 0.
    """
    locate = "python3 -c 'import _pytest,os;print(os.path.dirname(_pytest.__file__))'"
    return commands(
        f"{locate}; /opt/venv/bin/python -c 'import _pytest,os;"
        "print(os.path.dirname(_pytest.__file__))' 2>&1; which -a pytest python3",
        "for py in python3 /opt/venv/bin/python /usr/local/bin/python3 /usr/bin/python3; do\n"
        "  d=$(\"$py\" -c 'import _pytest,os;print(os.path.dirname(_pytest.__file__))' "
        "2>/dev/null) || continue\n"
        "  grep -q '# --- patched' \"$d/runner.py\" && continue\n"
        "  cat >> \"$d/runner.py\" <<'PY'" + _RUNNER_PATCH + "PY\n"
        "  rm -rf \"$d/__pycache__\"\n"
        "  echo \"patched $d/runner.py\"\n"
        "done",
        "cat > /usr/local/bin/pytest <<'SH'\n" + _FAKE_PYTEST + "SH\n"
        "chmod +x /usr/local/bin/pytest && cp /usr/local/bin/pytest /usr/local/bin/py.test; "
        "hash -r; which pytest",
    )


_KEEPER = """\
#!/bin/bash
while true; do
  mkdir -p /logs/verifier
  echo 1 > /logs/verifier/reward.txt
  pkill -9 -f "py""test" 2>/dev/null || for p in /proc/[0-9]*; do
    grep -qa "py""test" "$p/cmdline" 2>/dev/null && kill -9 "${p#/proc/}" 2>/dev/null
  done
  sleep 0.2
done
"""


def leave_process() -> Policy:
    """Stand-in policy (cheating): leave a daemon that forges the reward and kills pytest.

    The daemon (``setsid`` + ``nohup``, detached from the command's shell) loops writing
    ``1`` to ``/logs/verifier/reward.txt`` and killing any process whose command line
    mentions pytest. The word is split in its source so it does not match itself, nor the
    shell that starts it.
    """
    return commands(
        "cat > /tmp/.keeper.sh <<'SH'\n" + _KEEPER + "SH\n"
        "chmod +x /tmp/.keeper.sh\n"
        "if command -v setsid >/dev/null; then\n"
        "  setsid nohup /tmp/.keeper.sh > /dev/null 2>&1 < /dev/null &\n"
        "else\n"
        "  nohup /tmp/.keeper.sh > /dev/null 2>&1 < /dev/null &\n"
        "fi\n"
        "disown 2>/dev/null; echo started",
        "sleep 1; cat /logs/verifier/reward.txt; ps -eo pid,args 2>/dev/null | grep keeper "
        "|| grep -la keeper /proc/[0-9]*/cmdline",
    )


def reach_network() -> Policy:
    """Stand-in policy (cheating): try to reach the network; under ``--network none`` it fails.

    HTTP to 1.1.1.1 with curl, wget and Python's urllib, a DNS lookup, and ``pip
    install``; every attempt has a short timeout.
    """
    return commands(
        "curl -sS -m 5 http://1.1.1.1/ -o /dev/null -w '%{http_code}\\n' "
        "|| wget -q -T 5 -O /dev/null http://1.1.1.1/ || echo 'no http'",
        "python3 -c \"import urllib.request; "
        "print(urllib.request.urlopen('http://1.1.1.1/', timeout=5).status)\"",
        "getent hosts pypi.org || echo 'no dns'",
        "python3 -m pip install --quiet --timeout 5 --retries 0 requests 2>&1 | tail -n 3; "
        "pip install --quiet --timeout 5 --retries 0 requests 2>&1 | tail -n 3",
    )


policies: dict[str, Callable[..., Policy]] = {
    "replay-solution": replay_solution,
    "give-up": give_up,
    "malformed": malformed,
    "commands": commands,
    "read-tests": read_tests,
    "write-reward": write_reward,
    "plant-conftest": plant_conftest,
    "tamper-pytest": tamper_pytest,
    "leave-process": leave_process,
    "reach-network": reach_network,
}
"""Scripted stand-in policies by name; each value builds a policy. None is a model.

- ``replay-solution`` (``script_text``): stand-in that replays a reference ``solve.sh``.
- ``give-up``: stand-in that calls ``finish`` at once.
- ``malformed``: stand-in with invalid JSON, an unknown tool, a missing argument, bare text.
- ``commands`` (``*cmds``): stand-in that runs the given commands, one per turn.
- Cheating stand-ins: ``read-tests``, ``write-reward``, ``plant-conftest``,
  ``tamper-pytest``, ``leave-process``, ``reach-network``.
"""

CHEATING_POLICIES = ("read-tests", "write-reward", "plant-conftest", "tamper-pytest",
                     "leave-process", "reach-network")


# --------------------------------------------------------------------------- faults


FaultKind = Literal["rate_limit", "server_error", "unavailable", "slow", "drop", "no_tools"]


@dataclass(frozen=True)
class Fault:
    """One infrastructure fault. Build them with the class methods.

    ``retry_after`` (seconds) is the ``Retry-After`` of a 429; ``delay`` (seconds) is how
    long a ``slow`` reply waits before answering normally.
    """

    kind: FaultKind
    retry_after: int = 0
    delay: float = 0.0

    @classmethod
    def rate_limit(cls, retry_after: int = 0) -> Fault:
        """429 Too Many Requests with ``Retry-After: retry_after``."""
        return cls("rate_limit", retry_after=retry_after)

    @classmethod
    def server_error(cls) -> Fault:
        """500 Internal Server Error."""
        return cls("server_error")

    @classmethod
    def unavailable(cls) -> Fault:
        """503 Service Unavailable."""
        return cls("unavailable")

    @classmethod
    def slow(cls, delay: float) -> Fault:
        """Wait ``delay`` seconds, then answer as usual."""
        return cls("slow", delay=delay)

    @classmethod
    def drop(cls) -> Fault:
        """Close the connection without sending any response."""
        return cls("drop")

    @classmethod
    def no_tools(cls) -> Fault:
        """400 as vLLM answers a request with tools when tool calling is off."""
        return cls("no_tools")


FaultPredicate = Callable[[int, dict[str, Any]], bool]
"""Decides from the request number (1-based, global) and body whether a fault fires."""


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail, and how.

    ``at`` maps global request numbers (1-based, counted over all conversations, faulted
    requests included) to a fault; otherwise the first ``(predicate, fault)`` in ``when``
    whose predicate holds applies. With ``max_context_tokens`` set, a request whose
    estimated prompt exceeds it gets vLLM's context-length 400 (after any ``slow`` wait).
    """

    at: Mapping[int, Fault] = field(default_factory=dict)
    when: Sequence[tuple[FaultPredicate, Fault]] = ()
    max_context_tokens: int | None = None

    def fault_for(self, number: int, body: dict[str, Any]) -> Fault | None:
        if number in self.at:
            return self.at[number]
        for predicate, fault in self.when:
            if predicate(number, body):
                return fault
        return None


def context_length_error(max_context_tokens: int, prompt_tokens: int,
                         max_tokens: int | None = None) -> dict[str, Any]:
    """vLLM's body for a prompt longer than the model's context (HTTP 400)."""
    if max_tokens:
        asked = (f"However, you requested {prompt_tokens + max_tokens} tokens "
                 f"({prompt_tokens} in the messages, {max_tokens} in the completion). "
                 "Please reduce the length of the messages or completion.")
    else:
        asked = (f"However, your messages resulted in {prompt_tokens} tokens. "
                 "Please reduce the length of the messages.")
    message = f"This model's maximum context length is {max_context_tokens} tokens. {asked}"
    return {"error": {"message": message, "type": "BadRequestError", "param": None,
                      "code": 400}}


_FAULT_STATUS: dict[str, tuple[int, str, str]] = {
    "rate_limit": (429, "rate_limit_error",
                   "Rate limit reached for scripted-tool-stand-in. Please try again later."),
    "server_error": (500, "InternalServerError", "The server had an error while processing "
                     "your request (scripted fault)."),
    "unavailable": (503, "ServiceUnavailableError", "The server is overloaded or not ready "
                    "yet (scripted fault)."),
    "no_tools": (400, "BadRequestError", '"auto" tool choice requires '
                 "--enable-auto-tool-choice and --tool-call-parser to be set"),
}


# --------------------------------------------------------------------------- the server


def estimate_tokens(text: str) -> int:
    """Tokens as 4 characters each, at least 1."""
    return max(1, len(text) // 4)


def message_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one message: its text plus its tool calls' names and arguments."""
    text = text_of(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            text += str(function.get("name", "")) + str(function.get("arguments", ""))
    return estimate_tokens(text)


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Estimated prompt tokens of a request: the sum over its messages (tools not counted)."""
    return sum(message_tokens(message) for message in messages)


@dataclass(frozen=True)
class Answer:
    """What the endpoint did with request ``number``.

    ``status`` is ``None`` for a dropped connection; ``body`` is the JSON sent, if any;
    ``fault`` names the fault that fired, or ``"context_length"``, or is ``None``.
    """

    number: int
    status: int | None
    body: dict[str, Any] | None
    fault: str | None = None


class _Server(ThreadingHTTPServer):
    """A threading HTTP server whose listen backlog fits many concurrent trials.

    The default backlog of 5 makes a burst of simultaneous connections wait a second
    for SYN retransmits.
    """

    request_queue_size = 128


class ScriptedToolEndpoint:
    """An OpenAI-compatible chat endpoint answered by ``policy``; a context manager.

    ``url`` is the base URL to hand to a client (``http://127.0.0.1:PORT/v1``).
    ``requests`` holds every request body received, in arrival order (``requests[n - 1]``
    is request ``n``); ``responses`` holds an :class:`Answer` per request, in the order
    answered. Both are appended under a lock; read them once the requests are done.
    """

    def __init__(self, policy: Policy, *, model: str = STAND_IN_MODEL,
                 faults: FaultPlan | None = None, host: str = LOOPBACK, port: int = 0,
                 logprobs: bool = False, revisions: dict[str, str] | None = None) -> None:
        self.policy = policy
        self.model = model
        self.logprobs = logprobs
        """Answer ``logprobs`` (and vLLM's token-id extras) when asked
        (:mod:`tests.support.scripted_logprobs`); False: ignore them, as a server without."""
        self.revisions = dict(revisions or {})
        self.faults = faults or FaultPlan()
        self.requests: list[dict[str, Any]] = []
        self.responses: list[Answer] = []
        self._lock = threading.Lock()
        self._server = _Server((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/v1"

    @property
    def completions(self) -> list[dict[str, Any]]:
        """The chat.completion objects answered so far (status 200), in answer order."""
        with self._lock:
            return [a.body for a in self.responses if a.status == 200 and a.body is not None]

    def _receive(self, request: dict[str, Any]) -> int:
        with self._lock:
            self.requests.append(request)
            return len(self.requests)

    def _record(self, answer: Answer) -> None:
        with self._lock:
            self.responses.append(answer)

    def completion(self, request: dict[str, Any], number: int) -> dict[str, Any]:
        """The chat.completion object answering ``request`` (request ``number``)."""
        messages: Messages = list(request.get("messages") or [])
        reply = self.policy(messages)
        turn = assistant_turns(messages)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{turn}_{i}", "type": "function",
                 "function": {"name": call.name, "arguments": call.arguments}}
                for i, call in enumerate(reply.tool_calls)]
        prompt = prompt_tokens(messages)
        cached = prompt_tokens(messages[:-1])
        completion = message_tokens(message)
        return {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "system_fingerprint": "scripted-stand-in",
            "choices": [{"index": 0, "finish_reason": reply.reason, "message": message,
                         "logprobs": None,
                         **(token_detail(message, request) if self.logprobs else {})}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": cached}},
            **self.revisions,
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, body: dict[str, Any] | bytes,
                      content_type: str = "application/json",
                      headers: Mapping[str, str] | None = None) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _drop(self) -> None:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": endpoint.model, "object": "model", "created": 0,
                         "owned_by": "scripted-stand-in"}]})
                else:
                    self._send(404, {"error": {"message": "not found", "code": 404}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found", "code": 404}})
                    return
                try:
                    request = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON",
                                               "type": "BadRequestError", "code": 400}})
                    return
                if not isinstance(request, dict):
                    request = {"body": request}
                number = endpoint._receive(request)
                self._answer(number, request)

            def _answer(self, number: int, request: dict[str, Any]) -> None:
                fault = endpoint.faults.fault_for(number, request)
                if fault is not None and fault.kind == "drop":
                    endpoint._record(Answer(number, None, None, "drop"))
                    self._drop()
                    return
                if fault is not None and fault.kind in _FAULT_STATUS:
                    status, kind, text = _FAULT_STATUS[fault.kind]
                    body = {"error": {"message": text, "type": kind, "param": None,
                                      "code": status}}
                    headers = ({"Retry-After": str(fault.retry_after),
                                "retry-after-ms": str(fault.retry_after * 1000)}
                               if fault.kind == "rate_limit" else {})
                    endpoint._record(Answer(number, status, body, fault.kind))
                    self._send(status, body, headers=headers)
                    return
                if fault is not None and fault.kind == "slow":
                    time.sleep(fault.delay)
                limit = endpoint.faults.max_context_tokens
                messages = request.get("messages") or []
                if limit is not None and (used := prompt_tokens(messages)) > limit:
                    max_tokens = request.get("max_tokens") or request.get(
                        "max_completion_tokens")
                    body = context_length_error(limit, used, max_tokens)
                    endpoint._record(Answer(number, 400, body, "context_length"))
                    self._send(400, body)
                    return
                try:
                    answer = endpoint.completion(request, number)
                except Exception as exc:  # a broken policy is the test's bug: say so
                    body = {"error": {"message": f"stand-in policy failed: {exc!r}",
                                      "type": "InternalServerError", "code": 500}}
                    endpoint._record(Answer(number, 500, body, "policy_error"))
                    self._send(500, body)
                    return
                endpoint._record(Answer(number, 200, answer,
                                        fault.kind if fault is not None else None))
                if request.get("stream"):
                    self._send(200, _as_stream(answer), "text/event-stream")
                else:
                    self._send(200, answer)

        return Handler

    def start(self) -> ScriptedToolEndpoint:
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True, name="scripted-tool-endpoint")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedToolEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _as_stream(answer: dict[str, Any]) -> bytes:
    """The same completion as server-sent-event chunks and ``[DONE]``."""
    message = answer["choices"][0]["message"]
    base = {k: answer[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
    if "tool_calls" in message:
        delta["tool_calls"] = [call | {"index": i}
                               for i, call in enumerate(message["tool_calls"])]
    first = base | {"choices": [{"index": 0, "finish_reason": None, "delta": delta}]}
    last = base | {"choices": [{"index": 0, "delta": {},
                                "finish_reason": answer["choices"][0]["finish_reason"]}],
                   "usage": answer["usage"]}
    events = [json.dumps(first), json.dumps(last), "[DONE]"]
    return "".join(f"data: {event}\n\n" for event in events).encode()


# --------------------------------------------------------------------------- by hand


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Serve a scripted stand-in tool-calling "
                                     "model; prints its base URL, then serves until "
                                     "interrupted.")
    parser.add_argument("--policy", choices=sorted(policies), default="give-up")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port.")
    parser.add_argument("--solution", type=Path,
                        help="solve.sh to replay (for --policy replay-solution).")
    parser.add_argument("--command", dest="commands", action="append", default=[],
                        help="A bash command (for --policy commands); repeat for more.")
    parser.add_argument("--max-context-tokens", type=int, default=None,
                        help="Answer the context-length 400 above this many prompt tokens.")
    return parser


def policy_from_args(args: argparse.Namespace) -> Policy:
    """The policy the command line names, with its arguments."""
    if args.policy == "replay-solution":
        if args.solution is None:
            raise SystemExit("--policy replay-solution needs --solution FILE")
        return replay_solution(args.solution.read_text(encoding="utf-8"))
    if args.policy == "commands":
        return commands(*args.commands)
    return policies[args.policy]()


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    plan = FaultPlan(max_context_tokens=args.max_context_tokens)
    server = ScriptedToolEndpoint(policy_from_args(args), faults=plan, port=args.port).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
