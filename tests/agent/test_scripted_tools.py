"""The scripted stand-in tool-calling model: a real HTTP server on the loopback interface.

No Docker. The cheating policies' commands are only parsed here (``bash -n``), never run;
the pieces that are run (the solution heredoc, the planted conftest, the pytest patch)
run against temporary directories.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support import scripted_tools as st
from tests.support.scripted_tools import (
    CHEATING_POLICIES,
    STAND_IN_MODEL,
    Fault,
    FaultPlan,
    Messages,
    Reply,
    ScriptedToolEndpoint,
    bash_call,
    commands,
    finish_call,
    malformed,
    policies,
    read_tests,
    replay_solution,
    solution_command,
    text_reply,
    write_file_command,
)

ROOT = Path(__file__).resolve().parents[2]
TASK: Messages = [{"role": "system", "content": "You are in a terminal."},
                  {"role": "user", "content": "Write hello to /app/out.txt."}]


CLIENT = httpx2.Client(timeout=10)
"""One client for the module: building one per request costs more than the request."""


def _chat(url: str, messages: Messages, **extra: Any) -> httpx2.Response:
    body = {"model": STAND_IN_MODEL, "messages": messages, "tools": [],
            "tool_choice": "auto"} | extra
    return CLIENT.post(f"{url}/chat/completions", json=body)


def _message(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    message: dict[str, Any] = response.json()["choices"][0]["message"]
    return message


def _calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or []]


def _continue(messages: Messages, message: dict[str, Any], output: str = "ok") -> Messages:
    """The conversation after ``message``, with one tool result per tool call."""
    following: Messages = [{"role": "tool", "tool_call_id": call["id"], "content": output}
                           for call in message.get("tool_calls") or []]
    return [*messages, message, *following]


def _command(arguments: str) -> str | None:
    """The ``command`` of a bash call's arguments, if they are JSON and have one."""
    try:
        command = json.loads(arguments).get("command")
    except (json.JSONDecodeError, AttributeError):
        return None
    return command if isinstance(command, str) else None


def _policy_replies(policy: st.Policy, turns: int = 12) -> list[Reply]:
    """Replies of ``policy`` over a conversation, fed a bland tool result each turn."""
    messages: Messages = list(TASK)
    replies = []
    for turn in range(turns):
        reply = policy(messages)
        replies.append(reply)
        if any(call.name == "finish" for call in reply.tool_calls):
            break
        messages += [{"role": "assistant", "content": reply.content,
                      "tool_calls": [{"id": f"c{turn}", "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}}
                                     for c in reply.tool_calls]}]
        messages += [{"role": "tool", "tool_call_id": f"c{turn}", "content": "exit 0"}]
    return replies


# ------------------------------------------------------------------ the completion object


def test_reply_is_a_chat_completion_with_json_string_arguments() -> None:
    with ScriptedToolEndpoint(commands("ls -la /app")) as endpoint:
        response = _chat(endpoint.url, TASK)
    answer = response.json()
    assert response.headers["content-type"] == "application/json"
    assert answer["object"] == "chat.completion"
    assert answer["id"].startswith("chatcmpl-")
    assert isinstance(answer["created"], int)
    assert answer["model"] == STAND_IN_MODEL
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["role"] == "assistant"
    (call,) = message["tool_calls"]
    assert call["type"] == "function" and isinstance(call["id"], str) and call["id"]
    assert call["function"]["name"] == "bash"
    assert isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == {"command": "ls -la /app"}
    usage = answer["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens"] > usage["prompt_tokens_details"]["cached_tokens"] > 0
    assert endpoint.requests[0]["messages"] == TASK
    assert [a.status for a in endpoint.responses] == [200]
    assert endpoint.completions == [answer]


def test_usage_is_estimated_at_four_characters_a_token() -> None:
    messages: Messages = [{"role": "user", "content": "x" * 400},
                          {"role": "assistant", "content": None, "tool_calls": [
                              {"id": "c", "type": "function",
                               "function": {"name": "bash", "arguments": "y" * 76}}]},
                          {"role": "tool", "tool_call_id": "c", "content": "z" * 80}]
    with ScriptedToolEndpoint(st.sequence(then=text_reply("a" * 40))) as endpoint:
        usage = _chat(endpoint.url, messages).json()["usage"]
    assert usage == {"prompt_tokens": 100 + 20 + 20, "completion_tokens": 10,
                     "total_tokens": 150, "prompt_tokens_details": {"cached_tokens": 120}}


def test_text_only_turn_stops_without_tool_calls() -> None:
    with ScriptedToolEndpoint(st.sequence(text_reply("All done."))) as endpoint:
        answer = _chat(endpoint.url, TASK).json()
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": "All done."}


def test_turns_follow_the_assistant_messages_then_finish() -> None:
    with ScriptedToolEndpoint(commands("pwd", "ls")) as endpoint:
        messages = list(TASK)
        seen = []
        for _ in range(4):
            message = _message(_chat(endpoint.url, messages))
            seen.append(_calls(message))
            messages = _continue(messages, message)
    assert seen == [[("bash", '{"command": "pwd"}')], [("bash", '{"command": "ls"}')],
                    [("finish", "{}")], [("finish", "{}")]]
    ids = [call["id"] for m in messages if m["role"] == "assistant" for call in m["tool_calls"]]
    assert len(set(ids)) == len(ids)


def test_streaming_carries_the_tool_calls() -> None:
    with ScriptedToolEndpoint(commands("echo hi")) as endpoint:
        response = _chat(endpoint.url, TASK, stream=True)
    assert response.headers["content-type"] == "text/event-stream"
    events = [line[len("data: "):] for line in response.text.splitlines()
              if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    first, last = (json.loads(e) for e in events[:2])
    (call,) = first["choices"][0]["delta"]["tool_calls"]
    assert call["index"] == 0 and json.loads(call["function"]["arguments"]) == {
        "command": "echo hi"}
    assert last["choices"][0]["finish_reason"] == "tool_calls" and "usage" in last


def test_bad_requests_are_refused() -> None:
    with ScriptedToolEndpoint(commands("ls")) as endpoint:
        not_json = CLIENT.post(f"{endpoint.url}/chat/completions", content=b"{nope",
                               headers={"Content-Type": "application/json"})
        wrong_path = CLIENT.post(f"{endpoint.url}/completions", json={})
    assert not_json.status_code == 400 and wrong_path.status_code == 404
    assert endpoint.requests == []


def test_a_failing_policy_answers_500_naming_the_stand_in() -> None:
    def broken(messages: Messages) -> Reply:
        raise RuntimeError("boom")

    with ScriptedToolEndpoint(broken) as endpoint:
        response = _chat(endpoint.url, TASK)
    assert response.status_code == 500
    assert "stand-in policy failed" in response.json()["error"]["message"]
    assert endpoint.responses[0].fault == "policy_error"


# ------------------------------------------------------------------ named as a stand-in


def test_the_stand_in_is_named_as_one() -> None:
    with ScriptedToolEndpoint(commands()) as endpoint:
        models = CLIENT.get(f"{endpoint.url}/models").json()
        answer = _chat(endpoint.url, TASK).json()
    assert endpoint.url.startswith("http://127.0.0.1:") and endpoint.url.endswith("/v1")
    assert models["data"][0]["id"] == STAND_IN_MODEL == "scripted-tool-stand-in"
    assert answer["model"] == STAND_IN_MODEL
    assert "stand-in" in (st.__doc__ or "")
    for name, factory in policies.items():
        assert "stand-in" in (factory.__doc__ or "").lower(), name
    source = Path(st.__file__).read_text()
    assert 'policies: dict[str, Callable[..., Policy]] = {' in source
    assert '"""Scripted stand-in policies by name' in source


# ------------------------------------------------------------------ replay_solution

SCRIPTS = {
    "plain": "#!/bin/bash\nset -e\necho hello > out.txt\n",
    "empty": "",
    "no final newline": "echo hi > out.txt",
    "trailing blank lines": "echo hi > out.txt\n\n\n",
    "trailing spaces": "echo hi > out.txt  ",
    "quotes and expansions": ("x='$HOME' y=\"`id`\" z=$(( 1 + 2 ))\\\ncat <<'EOF'\n$x\nEOF\n"
                              "printf '%s\\n' \"$x\" > out.txt\n"),
    "the delimiter itself": ("cat > out.txt <<'TERMGRADE_SOLVE_EOF'\nhi\nTERMGRADE_SOLVE_EOF\n"
                             "echo TERMGRADE_SOLVE_EOF_1\n"),
    "tabs, CR and unicode": "\techo 'ünïcødé ✓'\r\n\t\techo tab > out.txt\n",
}


@pytest.mark.parametrize("text", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_heredoc_writes_any_text_byte_for_byte(text: str, tmp_path: Path) -> None:
    target = tmp_path / "dir with space" / "solve.sh"
    target.parent.mkdir()
    result = subprocess.run(["bash", "-c", write_file_command(text, str(target))],
                            cwd=tmp_path, capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == text.encode()


def test_solution_command_writes_and_runs_the_script_in_one_command(tmp_path: Path) -> None:
    script = "#!/bin/bash\nset -e\nprintf 'hello\\n' > out.txt\necho \"ran in $PWD\"\n"
    target = tmp_path / "solve.sh"
    command = solution_command(script, str(target))
    result = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == script
    assert (tmp_path / "out.txt").read_text() == "hello\n"
    assert f"ran in {tmp_path}" in result.stdout


def test_solution_command_keeps_the_script_exit_status(tmp_path: Path) -> None:
    command = solution_command("exit 3\n", str(tmp_path / "solve.sh"))
    assert subprocess.run(["bash", "-c", command], cwd=tmp_path, timeout=30).returncode == 3


def test_replay_solution_runs_the_script_then_finishes() -> None:
    script = (ROOT / "environments" / "word-frequency" / "solution" / "solve.sh")
    text = script.read_text() if script.is_file() else SCRIPTS["quotes and expansions"]
    with ScriptedToolEndpoint(replay_solution(text)) as endpoint:
        first = _message(_chat(endpoint.url, TASK))
        second = _message(_chat(endpoint.url, _continue(TASK, first)))
    ((name, arguments),) = _calls(first)
    assert name == "bash"
    assert json.loads(arguments)["command"] == solution_command(text, "/tmp/solve.sh")
    assert json.loads(arguments)["command"].endswith("bash '/tmp/solve.sh'\n")
    assert [name for name, _ in _calls(second)] == ["finish"]


# ------------------------------------------------------------------ the other policies


def test_give_up_finishes_at_once() -> None:
    (reply,) = _policy_replies(policies["give-up"]())
    assert [c.name for c in reply.tool_calls] == ["finish"]
    assert finish_call().tool_calls[0].arguments == "{}"


def test_malformed_sends_four_bad_turns_then_finishes() -> None:
    replies = _policy_replies(malformed())
    assert len(replies) == 5
    bad_json, unknown, missing, text, done = replies
    ((call,),) = [bad_json.tool_calls]
    assert call.name == "bash"
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.arguments)
    assert unknown.tool_calls[0].name not in {"bash", "finish"}
    assert missing.tool_calls[0].name == "bash"
    assert "command" not in json.loads(missing.tool_calls[0].arguments)
    assert text.tool_calls == () and text.reason == "stop" and text.content
    assert [c.name for c in done.tool_calls] == ["finish"]


def test_read_tests_reads_what_its_search_found() -> None:
    policy = read_tests()
    messages = list(TASK)
    for turn in range(2):
        reply = policy(messages)
        messages = _continue(messages, {"role": "assistant", "content": reply.content,
                                        "tool_calls": [{"id": f"c{turn}", "type": "function",
                                                        "function": {"name": "bash",
                                                                     "arguments": "{}"}}]},
                             "exit status 0\n/tests/test_outputs.py\n/solution/solve.sh\n")
    command = json.loads(policy(messages).tool_calls[0].arguments)["command"]
    assert "'/tests/test_outputs.py' '/solution/solve.sh'" in command


@pytest.mark.parametrize("name", sorted(set(policies) - {"replay-solution", "commands"}))
def test_every_policy_command_is_valid_bash(name: str) -> None:
    replies = _policy_replies(policies[name]())
    assert [c.name for c in replies[-1].tool_calls] == ["finish"]
    bash = [command for r in replies[:-1] for c in r.tool_calls
            if c.name == "bash" and (command := _command(c.arguments)) is not None]
    if name in CHEATING_POLICIES:
        assert len(bash) == len(replies) - 1 >= 2
    for command in bash:  # parsed, never run
        result = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True,
                                timeout=30)
        assert result.returncode == 0, (command, result.stderr)


def test_cheating_policies_do_what_they_claim() -> None:
    def script(name: str) -> str:
        return "\n".join(_command(c.arguments) or "" for r in _policy_replies(policies[name]())
                         for c in r.tool_calls)

    assert "/tests" in script("read-tests") and "test_*.py" in script("read-tests")
    assert "/logs/verifier/reward.txt" in script("write-reward")
    assert "reward.json" in script("write-reward")
    planted = script("plant-conftest")
    for path in ("/app/conftest.py", "/tests/conftest.py", "/conftest.py", "/tmp/conftest.py"):
        assert path in planted
    tampered = script("tamper-pytest")
    assert "_pytest" in tampered and '"$d/runner.py"' in tampered
    assert "/usr/local/bin/pytest" in tampered
    kept = script("leave-process")
    assert "setsid" in kept and "nohup" in kept and "pkill" in kept
    assert "pytest" not in kept.replace("/logs/verifier", "")  # it must not kill itself
    network = script("reach-network")
    assert "http://1.1.1.1" in network and "pip install" in network and "urllib" in network


def test_planted_conftest_makes_failing_tests_pass(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(st._CONFTEST)
    (tmp_path / "test_x.py").write_text("def test_fails():\n    assert 1 == 2\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env=os.environ | {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_runner_patch_makes_failing_tests_pass(tmp_path: Path) -> None:
    import _pytest  # a copy is patched; the installed package is not touched

    copy = tmp_path / "site" / "_pytest"
    shutil.copytree(Path(_pytest.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "runner.py").open("a") as runner:
        runner.write(st._RUNNER_PATCH)
    (tmp_path / "test_x.py").write_text("def test_fails():\n    assert 1 == 2\n")
    env = os.environ | {"PYTHONPATH": str(copy.parent), "PYTHONDONTWRITEBYTECODE": "1",
                        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(tmp_path / "test_x.py")], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


# ------------------------------------------------------------------ faults


def test_faults_fire_on_the_planned_requests() -> None:
    plan = FaultPlan(at={1: Fault.rate_limit(retry_after=1), 2: Fault.server_error(),
                         3: Fault.unavailable(), 4: Fault.drop()})
    with ScriptedToolEndpoint(commands("ls"), faults=plan) as endpoint:
        limited = _chat(endpoint.url, TASK)
        failed = _chat(endpoint.url, TASK)
        unavailable = _chat(endpoint.url, TASK)
        with pytest.raises(httpx2.TransportError):
            _chat(endpoint.url, TASK)
        fine = _chat(endpoint.url, TASK)
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "1"
    assert limited.json()["error"]["code"] == 429
    assert failed.status_code == 500 and unavailable.status_code == 503
    assert _calls(_message(fine)) == [("bash", '{"command": "ls"}')]
    assert [(a.number, a.status, a.fault) for a in endpoint.responses] == [
        (1, 429, "rate_limit"), (2, 500, "server_error"), (3, 503, "unavailable"),
        (4, None, "drop"), (5, 200, None)]
    assert len(endpoint.requests) == 5


def test_dropped_connection_is_a_remote_protocol_error() -> None:
    plan = FaultPlan(at={1: Fault.drop()})
    with ScriptedToolEndpoint(commands("ls"), faults=plan) as endpoint, \
            pytest.raises(httpx2.RemoteProtocolError):
        _chat(endpoint.url, TASK)


def test_rate_limit_defaults_to_retry_after_zero() -> None:
    plan = FaultPlan(at={1: Fault.rate_limit()})
    with ScriptedToolEndpoint(commands("ls"), faults=plan) as endpoint:
        response = _chat(endpoint.url, TASK)
    assert response.status_code == 429 and response.headers["retry-after"] == "0"


def test_slow_reply_waits_then_answers() -> None:
    plan = FaultPlan(at={1: Fault.slow(0.6), 2: Fault.slow(0.3)})
    with ScriptedToolEndpoint(commands("ls"), faults=plan) as endpoint:
        with pytest.raises(httpx2.TimeoutException):
            CLIENT.post(f"{endpoint.url}/chat/completions", json={"messages": TASK},
                        timeout=0.1)
        started = time.monotonic()
        response = _chat(endpoint.url, TASK)
        waited = time.monotonic() - started
    assert response.status_code == 200 and waited >= 0.3


def test_predicate_faults_pick_requests_by_content() -> None:
    def finishing(number: int, body: dict[str, Any]) -> bool:
        return any(m.get("role") == "assistant" for m in body["messages"])

    plan = FaultPlan(when=[(finishing, Fault.unavailable())])
    with ScriptedToolEndpoint(commands("ls"), faults=plan) as endpoint:
        first = _message(_chat(endpoint.url, TASK))
        second = _chat(endpoint.url, _continue(TASK, first))
        again = _chat(endpoint.url, TASK)
    assert second.status_code == 503 and again.status_code == 200


def test_context_length_is_exceeded_over_the_limit() -> None:
    plan = FaultPlan(max_context_tokens=100)
    with ScriptedToolEndpoint(commands("ls"), faults=plan) as endpoint:
        short = _chat(endpoint.url, [{"role": "user", "content": "x" * 400}])
        long = _chat(endpoint.url, [{"role": "user", "content": "x" * 404}])
        with_budget = _chat(endpoint.url, [{"role": "user", "content": "x" * 800}],
                            max_tokens=50)
    assert short.status_code == 200
    assert long.status_code == 400
    error = long.json()["error"]
    assert error["type"] == "BadRequestError" and error["code"] == 400
    assert error["message"].startswith(
        "This model's maximum context length is 100 tokens. However, ")
    assert "101 tokens" in error["message"]
    assert "250 tokens (200 in the messages, 50 in the completion)" in (
        with_budget.json()["error"]["message"])
    assert [a.fault for a in endpoint.responses] == [None, "context_length", "context_length"]


# ------------------------------------------------------------------ concurrency


def test_concurrent_conversations_are_independent() -> None:
    def per_task(messages: Messages) -> Reply:
        task = messages[1]["content"]
        turn = st.assistant_turns(messages)
        return bash_call(f"echo {task} {turn}") if turn < 3 else finish_call()

    results: dict[int, list[str]] = {}
    gate = threading.Barrier(8)

    def converse(index: int, url: str) -> None:
        messages: Messages = [{"role": "system", "content": "sys"},
                              {"role": "user", "content": f"task{index}"}]
        seen = []
        for _ in range(4):
            gate.wait(timeout=10)
            message = _message(_chat(url, messages))
            seen.append(" ".join(f"{n}:{a}" for n, a in _calls(message)))
            messages = _continue(messages, message, f"output of task{index}")
        results[index] = seen

    with ScriptedToolEndpoint(per_task) as endpoint:
        threads = [threading.Thread(target=converse, args=(i, endpoint.url)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert sorted(results) == list(range(8))
    for index, seen in results.items():
        assert seen == [f'bash:{{"command": "echo task{index} {turn}"}}' for turn in range(3)] + [
            "finish:{}"]
    assert len(endpoint.requests) == 32
    assert sorted(a.number for a in endpoint.responses) == list(range(1, 33))
    assert len({c["id"] for c in endpoint.completions}) == 32


# ------------------------------------------------------------------ by hand


def test_parser_names_every_policy() -> None:
    args = st.build_parser().parse_args(["--policy", "commands", "--command", "ls",
                                         "--command", "pwd"])
    assert args.port == 0 and args.commands == ["ls", "pwd"]
    replies = _policy_replies(st.policy_from_args(args))
    assert [c.arguments for r in replies for c in r.tool_calls] == [
        '{"command": "ls"}', '{"command": "pwd"}', "{}"]
    for name in policies:
        assert st.build_parser().parse_args(["--policy", name]).policy == name


def test_runs_from_a_shell() -> None:
    process = subprocess.Popen([sys.executable, "-m", "tests.support.scripted_tools",
                                "--policy", "give-up"], cwd=ROOT, stdout=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        message = _message(_chat(url, TASK))
        assert [name for name, _ in _calls(message)] == ["finish"]
    finally:
        process.terminate()
        process.wait(timeout=10)
