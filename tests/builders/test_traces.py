"""`termgrade build trajectories` writes every trial as a Hub agent trace (Session Trace
Simple Format) and, with ``atif=True``, as a Harbor ATIF trajectory; `validate` checks
both."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from termgrade.agent import SCAFFOLD_NAME
from termgrade.builders.card import split_front_matter
from termgrade.builders.traces import atif_rel, trace_rel
from termgrade.builders.trajectories import build_trajectories
from termgrade.records import ChatMessage
from termgrade.records.trial import EpisodeStep, ToolCall, ToolFunction, TrialRecord
from termgrade.validate import validate_repo
from termgrade.validate.traces_check import sts_problems
from tests.support.harbor import Harbor
from tests.support.records import trial, write_trials
from tests.support.task_dirs import MakeTask

# The Hub's documented example (hub-docs, docs/hub/session-traces-format.md), verbatim.
HUB_EXAMPLE = """\
{"type":"session","harness":"my-agent","id":"abc123","name":"what time is it"}
{"type":"message","message":{"role":"user","content":"what time is it?"}}
{"type":"message","message":{"role":"assistant","content":"","toolCalls":[{"id":"t1","function":{"name":"get_time","arguments":"{}"}}]}}
{"type":"message","message":{"role":"tool","toolCallId":"t1","content":"2026-07-01T15:00:00Z"}}
{"type":"message","message":{"role":"assistant","content":"it is 15:00 UTC"}}
"""
HEADER_REQUIRED = {"type", "harness", "id"}
MESSAGE_FIELDS = {"role", "content", "reasoningContent", "toolCalls", "toolCallId",
                  "timestamp", "model"}


@pytest.fixture
def tasks(make_task: MakeTask) -> Path:
    make_task("alpha")
    return make_task("bravo").parent


def _records() -> list:  # type: ignore[type-arg]
    records = [trial(i, task_id="alpha" if i < 3 else "bravo", messages=i != 4)
               for i in range(6)]
    records[1].scaffold = SCAFFOLD_NAME
    records[1].messages = [
        ChatMessage(role="system", content="You are in a terminal."),
        ChatMessage(role="user", content="Write hello."),
        ChatMessage(role="assistant", content=None, reasoning_content="echo it",
                    tool_calls=[ToolCall(id="c0", function=ToolFunction(
                        name="bash", arguments='{"command": "echo hello > /app/out"}'))]),
        ChatMessage(role="tool", tool_call_id="c0", name="bash", content="(no output)"),
        ChatMessage(role="assistant", content="done", tool_calls=[ToolCall(
            id="c1", function=ToolFunction(name="finish", arguments="{oops"))]),
    ]
    records[1].episode = None
    return records


def _lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_hubs_example_passes_and_broken_traces_do_not() -> None:
    assert sts_problems(HUB_EXAMPLE.splitlines()) == []
    lines = HUB_EXAMPLE.splitlines()
    broken = {
        "no session line": lines[1:],
        "content missing": [lines[0], '{"type":"message","message":{"role":"user"}}'],
        "arguments not a string": [lines[0], '{"type":"message","message":{"role":"assistant",'
                                   '"content":"","toolCalls":[{"id":"t1","function":{"name":'
                                   '"f","arguments":{}}}]}}'],
        "unknown role": [lines[0], '{"type":"message","message":{"role":"bot","content":""}}'],
        "answers no call": [lines[0], '{"type":"message","message":{"role":"tool",'
                            '"toolCallId":"zz","content":""}}'],
        "timestamp not ms": [lines[0], '{"type":"message","message":{"role":"user",'
                             '"content":"","timestamp":"2026-01-01"}}'],
    }
    for name, trace in broken.items():
        assert sts_problems(trace), name


def test_every_trial_is_a_trace_of_the_documented_shape(tasks: Path, tmp_path: Path) -> None:
    records = _records()
    out = tmp_path / "traj"
    summary = build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records),
                                 task_roots=[tasks])
    assert sorted(summary.trace_files) == sorted(trace_rel(r.task_id, r.trial_id)
                                                 for r in records)
    for record in records:
        lines = _lines(out / trace_rel(record.task_id, record.trial_id))
        header, messages = lines[0], lines[1:]
        assert header["type"] == "session" and set(header) >= HEADER_REQUIRED
        assert header["harness"] == "termgrade" and header["id"] == record.trial_id
        assert (header["task_id"], header["model"], header["passed"]) == \
            (record.task_id, record.model, record.passed)
        for line in messages:
            assert set(line) == {"type", "message"} and line["type"] == "message"
            message = line["message"]
            assert set(message) <= MESSAGE_FIELDS
            assert message["role"] in {"user", "assistant", "system", "tool"}
            assert isinstance(message["content"], str)
            for call in message.get("toolCalls", []):
                assert set(call) == {"id", "function"}
                assert set(call["function"]) == {"name", "arguments"}
                assert isinstance(call["function"]["arguments"], str)
            if message["role"] == "assistant":
                assert message["model"] == record.model
        expected = record.messages or []
        if record.messages is not None:
            assert [m["message"]["content"] for m in messages] == \
                [m.content or "" for m in expected]
    tool_trace = [m["message"] for m in _lines(out / trace_rel("alpha", records[1].trial_id))[1:]]
    assert tool_trace[2]["reasoningContent"] == "echo it"
    assert tool_trace[2]["toolCalls"] == [{"id": "c0", "function": {
        "name": "bash", "arguments": '{"command": "echo hello > /app/out"}'}}]
    assert tool_trace[3] == {"role": "tool", "content": "(no output)", "toolCallId": "c0"}
    assert tool_trace[4]["toolCalls"][0]["function"]["arguments"] == "{oops"  # as written
    rebuilt = _lines(out / trace_rel("bravo", records[4].trial_id))  # from the episode
    assert [m["message"]["role"] for m in rebuilt[1:]] == ["user", "assistant", "user",
                                                            "assistant", "user"]
    meta, _ = split_front_matter((out / "README.md").read_text())
    assert "agent-traces" in meta["tags"]
    config = next(c for c in meta["configs"] if c["config_name"] == "traces")
    assert config["data_files"] == [{"split": "train", "path": "data/traces/train-*.parquet"}]
    report = validate_repo(out, load=False, secrets=False, cache=False)
    assert report.ok, [str(f) for f in report.findings]
    assert "6 agent trace(s)" in report.passed["traces"]


def test_validate_finds_broken_untagged_and_secret_bearing_traces(
        tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", _records()),
                       task_roots=[tasks])
    broken = out / trace_rel("alpha", "alpha__0")
    broken.write_text(broken.read_text() + '{"type":"message","message":{"role":"user"}}\n')
    stray = out / "traces" / "extra.jsonl"  # in no row of the traces config
    stray.write_text('{"type":"session","harness":"termgrade","id":"alpha__0"}\n')
    key = "AKIA" + "QWERTYUIOPASDFGH"  # an AWS access key id, built so no scanner trips here
    secret = out / trace_rel("bravo", "bravo__3")
    secret.write_text(secret.read_text() + json.dumps(
        {"type": "message", "message": {"role": "user", "content": f"aws_key = {key}"}}) + "\n")
    readme = out / "README.md"
    readme.write_text(readme.read_text().replace("- agent-traces\n", ""))
    report = validate_repo(out, load=False, secrets=True, cache=False)
    found = {(f.check, f.file, f.message) for f in report.findings}
    assert ("traces", broken.relative_to(out).as_posix(),
            "required, a string (may be empty)") in found
    assert any(c == "traces" and f == "traces/extra.jsonl" and "in no row" in m
               for c, f, m in found)
    assert any(c == "traces" and "also in" in m for c, _, m in found)  # duplicate session id
    assert any(c == "traces" and "agent-traces" in m for c, _, m in found)
    assert any(c == "secrets" and f == secret.relative_to(out).as_posix() for c, f, _ in found)


VALIDATE_WITH_HARBOR = """
import json, sys
from harbor.models.trajectories.trajectory import Trajectory
for path in sys.argv[1:]:
    Trajectory.model_validate(json.load(open(path)))
print("ok", len(sys.argv) - 1)
"""


@pytest.mark.harbor
def test_atif_export_validates_with_harbors_own_model(tasks: Path, tmp_path: Path,
                                                      harbor: Harbor) -> None:
    records = _records()
    out = tmp_path / "traj"
    summary = build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records),
                                 task_roots=[tasks], atif=True)
    files = [out / atif_rel(r.task_id, r.trial_id) for r in records]
    assert all(f.is_file() for f in files)
    assert {atif_rel(r.task_id, r.trial_id) for r in records} <= set(summary.trace_files)
    done = harbor.python_run(VALIDATE_WITH_HARBOR, *map(str, files), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["ok", str(len(files))]
    tool = json.loads(files[1].read_text())
    assert tool["schema_version"] == "ATIF-v1.8"
    agent_steps = [s for s in tool["steps"] if s["source"] == "agent"]
    assert agent_steps[0]["tool_calls"][0]["arguments"] == {"command": "echo hello > /app/out"}
    assert agent_steps[0]["observation"]["results"] == [
        {"source_call_id": "c0", "content": "(no output)"}]
    assert agent_steps[1]["tool_calls"][0]["arguments"] == {"raw": "{oops"}
    terminus = json.loads(files[0].read_text())  # from the episode: keystrokes as calls
    calls = [c for s in terminus["steps"] for c in s.get("tool_calls", [])]
    assert [c["arguments"]["keystrokes"] for c in calls] == ["echo 0\n", "echo 1\n"]
    report = validate_repo(out, load=False, secrets=False, cache=False)
    assert report.ok, [str(f) for f in report.findings]


def test_the_traces_config_loads_with_datasets(tasks: Path, tmp_path: Path) -> None:
    """``load_dataset(repo, "traces")``: one row per trial, the STS file's own content."""
    from datasets import load_dataset

    records = _records()
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records),
                       task_roots=[tasks])
    traces = load_dataset(str(out), "traces", split="train", cache_dir=str(tmp_path / "c"))
    assert sorted(traces["trial_id"]) == sorted(r.trial_id for r in records)
    for row in traces:
        lines = _lines(out / row["path"])
        assert json.loads(row["session_json"]) == lines[0]
        assert [m["content"] for m in row["messages"]] == \
            [line["message"]["content"] for line in lines[1:]]
    report = validate_repo(out, secrets=False, cache=False)  # loads every config
    assert report.ok, [str(f) for f in report.findings]


def test_validate_loads_a_jsonl_traces_config_and_says_why_it_fails(
        tasks: Path, tmp_path: Path) -> None:
    """The card of earlier builds named the JSONL files: datasets cannot load that config
    (ArrowInvalid: one builder, parquet, for every config). validate tries, and says so."""
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", _records()),
                       task_roots=[tasks])
    readme = out / "README.md"
    readme.write_text(readme.read_text().replace("data/traces/train-*.parquet",
                                                 "traces/train/*/*.jsonl"))
    report = validate_repo(out, secrets=False, cache=False)
    found = [str(f) for f in report.findings]
    assert any(f.startswith("load: README.md configs[traces]/train: load_dataset failed")
               for f in found), found
    assert any("names JSONL trace files" in f for f in found)


def test_an_empty_trials_file_is_refused(tasks: Path, tmp_path: Path) -> None:
    from termgrade.builders.errors import BuildError

    empty = tmp_path / "t.jsonl"
    empty.write_text("")
    with pytest.raises(BuildError, match="no trial to build") as caught:
        build_trajectories(tmp_path / "traj", trials=empty, task_roots=[tasks])
    assert "termgrade grade" in str(caught.value)
    assert not (tmp_path / "traj").exists()


def test_a_trajectories_repo_with_termgrades_digests_passes_the_secret_gate(
        tasks: Path, tmp_path: Path) -> None:
    """Trials of `termgrade grade` carry task and scaffold digests; the ATIF files and
    the traces rows' session lines hold them where detect-secrets flags them (2 each).
    They are TermGrade's own: filtered, counted, never a finding."""
    import hashlib

    from termgrade.builders.layout import RepoPaths
    from termgrade.validate.secrets_check import scan

    records = [trial(i, task_id="alpha").model_copy(update={
        "task_digest": hashlib.sha256(f"task {i}".encode()).hexdigest(),
        "scaffold_digest": hashlib.sha256(b"scaffold").hexdigest()}) for i in range(3)]
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records),
                       task_roots=[tasks], atif=True)
    hits = scan(RepoPaths(out))[0]
    assert len(hits) == 12 and all(h.known_false_positive for h in hits)
    assert {h.file.split("/")[0] for h in hits} == {"atif", "data"}
    report = validate_repo(out, load=False, cache=False)
    assert report.ok, [str(f) for f in report.findings]
    assert any("12 known false positive(s) filtered" in n for n in report.notes)


INSTRUCTION = "Write hello to /app/out.txt."  # make_task's instruction.md, as grade sends it


def _graded_bash_tool_trial() -> TrialRecord:
    """A bash-tool trial as ``termgrade grade`` records it: its chat (system prompt, the
    instruction, ``bash`` and ``finish`` calls, tool answers) and its episode (one step
    per assistant turn, keystrokes = the commands, times and tokens)."""
    record = trial(7, task_id="alpha")
    record.scaffold = SCAFFOLD_NAME
    record.messages = [
        ChatMessage(role="system", content="You are in a terminal."),
        ChatMessage(role="user", content=INSTRUCTION),
        ChatMessage(role="assistant", content="I will write it.", tool_calls=[ToolCall(
            id="call_a", function=ToolFunction(
                name="bash", arguments='{"command": "echo hello > /app/out.txt"}'))]),
        ChatMessage(role="tool", tool_call_id="call_a", name="bash", content="(no output)"),
        ChatMessage(role="assistant", content=None, tool_calls=[ToolCall(
            id="call_b", function=ToolFunction(
                name="finish", arguments='{"summary": "Wrote hello to /app/out.txt."}'))]),
        ChatMessage(role="tool", tool_call_id="call_b", name="finish",
                    content="Task marked as finished; it will now be graded."),
    ]
    record.episode = [
        EpisodeStep(index=0, source="agent", message="I will write it.",
                    keystrokes=["echo hello > /app/out.txt"], observation="(no output)",
                    input_tokens=300, output_tokens=20,
                    timestamp=datetime(2026, 12, 4, 12, 0, tzinfo=UTC)),
        EpisodeStep(index=1, source="agent", message="", keystrokes=[],
                    observation="Task marked as finished; it will now be graded.",
                    input_tokens=340, output_tokens=12,
                    timestamp=datetime(2026, 12, 4, 12, 1, tzinfo=UTC)),
    ]
    return record


def _read_back(atif: dict) -> list[dict]:  # type: ignore[type-arg]
    """The OpenAI chat an ATIF trajectory says happened: steps back into messages."""
    out: list[dict] = []  # type: ignore[type-arg]
    for step in atif["steps"]:
        if step["source"] != "agent":
            out.append({"role": step["source"], "content": step["message"]})
            continue
        calls = step.get("tool_calls") or []
        out.append({"role": "assistant", "content": step["message"] or None,
                    "tool_calls": [{"id": c["tool_call_id"], "name": c["function_name"],
                                    "arguments": c["arguments"]} for c in calls]})
        names = {c["tool_call_id"]: c["function_name"] for c in calls}
        for result in (step.get("observation") or {}).get("results", []):
            out.append({"role": "tool", "tool_call_id": result["source_call_id"],
                        "name": names.get(result["source_call_id"]),
                        "content": result["content"]})
    return out


def _as_called(record: TrialRecord) -> list[dict]:  # type: ignore[type-arg]
    out: list[dict] = []  # type: ignore[type-arg]
    for m in record.messages or []:
        if m.role == "assistant":
            out.append({"role": "assistant", "content": m.content, "tool_calls": [
                {"id": c.id, "name": c.function.name,
                 "arguments": json.loads(c.function.arguments)} for c in m.tool_calls or []]})
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "name": m.name,
                        "content": m.content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def test_a_bash_tool_trial_exports_to_atif_as_it_happened(tasks: Path, tmp_path: Path) -> None:
    """Issue 33, item 8: before, the episode won: ``bash {command}`` became
    ``bash_command {keystrokes}``, ``finish`` was dropped, observations named no call and
    the instruction was missing."""
    record = _graded_bash_tool_trial()
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", [record]),
                       task_roots=[tasks], atif=True)
    atif = json.loads((out / atif_rel(record.task_id, record.trial_id)).read_text())
    assert _read_back(atif) == _as_called(record)  # every turn, call and answer, as called
    steps = atif["steps"]
    assert [s["source"] for s in steps] == ["system", "user", "agent", "agent"]
    assert steps[1]["message"] == INSTRUCTION
    assert [c["function_name"] for s in steps for c in s.get("tool_calls", [])] == \
        ["bash", "finish"]
    assert steps[2]["metrics"] == {"prompt_tokens": 300, "completion_tokens": 20,
                                   "cached_tokens": None}
    assert steps[3]["timestamp"].startswith("2026-12-04T12:01")
    assert atif["extra"]["final_message"] == "Wrote hello to /app/out.txt."


def test_an_episode_export_carries_the_instruction(tasks: Path, tmp_path: Path) -> None:
    record = trial(0, task_id="alpha")  # Terminus-2: keystrokes, no tool calls in the chat
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", [record]),
                       task_roots=[tasks], atif=True)
    atif = json.loads((out / atif_rel(record.task_id, record.trial_id)).read_text())
    users = [s["message"] for s in atif["steps"] if s["source"] == "user"]
    assert INSTRUCTION in [u.strip() for u in users]
    assert [s["step_id"] for s in atif["steps"]] == list(range(1, len(atif["steps"]) + 1))
    assert atif["extra"]["final_message"] == '{"commands": []}'


READ_BACK_WITH_HARBOR = """
import json, sys
from harbor.models.trajectories.trajectory import Trajectory
t = Trajectory.model_validate(json.load(open(sys.argv[1])))
print(json.dumps({
    "calls": [[c.tool_call_id, c.function_name, c.arguments]
              for s in t.steps for c in (s.tool_calls or [])],
    "links": [r.source_call_id for s in t.steps if s.observation
              for r in s.observation.results],
    "sources": [s.source for s in t.steps], "user": [s.message for s in t.steps
                                                    if s.source == "user"],
    "final": (t.extra or {}).get("final_message")}))
"""


@pytest.mark.harbor
def test_harbor_reads_back_the_calls_their_links_and_the_instruction(
        tasks: Path, tmp_path: Path, harbor: Harbor) -> None:
    record = _graded_bash_tool_trial()
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", [record]),
                       task_roots=[tasks], atif=True)
    done = harbor.python_run(READ_BACK_WITH_HARBOR,
                             str(out / atif_rel(record.task_id, record.trial_id)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert seen["calls"] == [["call_a", "bash", {"command": "echo hello > /app/out.txt"}],
                             ["call_b", "finish", {"summary": "Wrote hello to /app/out.txt."}]]
    assert seen["links"] == ["call_a", "call_b"]
    assert seen["sources"] == ["system", "user", "agent", "agent"]
    assert seen["user"] == [INSTRUCTION] and seen["final"] == "Wrote hello to /app/out.txt."
