"""`termgrade build trajectories`: SFT messages and full episodes, streamed to parquet."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from termgrade.agent import SCAFFOLD_NAME, TOOLS
from termgrade.builders.trajectories import build_trajectories
from termgrade.builders.trajectory_rows import messages_from_episode, resolve_steps
from termgrade.records import (
    ChatMessage,
    LabelRow,
    SplitRow,
)
from termgrade.records.trial import ToolCall, ToolFunction
from termgrade.validate import validate_repo
from tests.support.records import trial, write_trials
from tests.support.task_dirs import MakeTask

# Columns of Harbor's trace export (harbor/utils/traces_utils.py: conversations, agent,
# model, model_provider, date, task, episode, run_id, trial_name, result,
# tool_definitions, instruction, verifier_output; trace_source when subagents merge).
HARBOR_TRACE_COLUMNS = {"conversations", "agent", "model", "model_provider", "date", "task",
                        "episode", "run_id", "trial_name", "result", "tool_definitions",
                        "instruction", "verifier_output", "trace_source"}


@pytest.fixture
def tasks(make_task: MakeTask) -> Path:
    make_task("alpha")
    return make_task("bravo").parent


def test_sft_messages_are_the_records_messages_unmodified(tasks: Path, tmp_path: Path) -> None:
    records = [trial(i, messages=i != 4) for i in range(6)]
    records[1].messages = [  # a bash-tool trial: tool calls, tool answers, reasoning
        ChatMessage(role="user", content="Write hello."),
        ChatMessage(role="assistant", content=None, reasoning_content="echo it",
                    tool_calls=[ToolCall(id="c0", function=ToolFunction(
                        name="bash", arguments='{"command": "echo hello > /app/out"}'))]),
        ChatMessage(role="tool", tool_call_id="c0", name="bash", content="(no output)"),
        ChatMessage(role="assistant", content="{not json", tool_calls=[ToolCall(
            id="c1", function=ToolFunction(name="finish", arguments="{oops"))]),
    ]
    records[1].scaffold = SCAFFOLD_NAME
    out = tmp_path / "traj"
    summary = build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records),
                                 task_roots=[tasks])
    assert summary.stats.trials == 6 and summary.stats.passed == 3
    rows = pq.read_table(out / "data" / "sft" / "train-00000-of-00001.parquet").to_pylist()
    assert [r["trial_id"] for r in rows] == [t.trial_id for t in records]
    assert [r["messages_source"] for r in rows] == ["recorded"] * 4 + ["episode-rebuilt",
                                                                       "recorded"]
    for i in (0, 1):  # every field of every message, tool calls included, as recorded
        assert rows[i]["messages"] == [m.model_dump() for m in records[i].messages or []]
    derived = messages_from_episode([s.model_dump(mode="json") for s in records[4].episode or []])
    assert rows[4]["messages"] == [ChatMessage(**m).model_dump() for m in derived]
    schema = pq.read_schema(out / "data" / "sft" / "train-00000-of-00001.parquet")
    messages_type = schema.field("messages").type
    assert pa.types.is_list(messages_type)
    message = messages_type.value_type
    assert message.names == ["role", "content", "tool_calls", "tool_call_id", "name",
                             "reasoning_content"]
    assert message.field("content").type == pa.large_string()
    assert message.field("content").nullable and not message.field("role").nullable
    # What a user's load_dataset gives back is what the scaffold sent and received.
    loaded = load_dataset("parquet", data_files=str(out / "data" / "sft" / "*.parquet"),
                          split="train")
    assert loaded[1]["messages"] == rows[1]["messages"]
    assert loaded[1]["messages"][1]["tool_calls"][0]["function"]["arguments"] == \
        '{"command": "echo hello > /app/out"}'
    # The tools that render them: on the bash-tool trial's episode row, on no other.
    episodes = pq.read_table(out / "data" / "episodes" / "train-00000-of-00001.parquet")
    definitions = episodes.column("tool_definitions").to_pylist()
    assert json.loads(definitions[1]) == list(TOOLS)
    assert definitions[0] is None and records[0].scaffold != SCAFFOLD_NAME


def test_episode_messages_derived_like_harbor() -> None:
    steps = [s.model_dump(mode="json") for s in trial(0, turns=1).episode or []]
    assert messages_from_episode(steps) == [
        {"role": "user", "content": "Write hello."},
        {"role": "assistant", "content": 'plan 0\n<tool_call>\n{"name": "send_keys", '
                                         '"arguments": {"keystrokes": "echo 0\\n"}}\n</tool_call>'},
        {"role": "user", "content": "ok\n"},
    ]


def _read(out: Path, config: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = pq.read_table(out / "data" / config).to_pylist()
    return rows


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def test_episodes_keep_everything_and_with_sft_cover_harbors_columns(
        tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", [trial(0, frame="x" * 5000)]),
                       task_roots=[tasks])
    [sft], [row] = _read(out, "sft"), _read(out, "episodes")
    harbor = {"conversations": "messages", "agent": "scaffold", "task": "task_id",
              "trial_name": "trial_id"}
    joined = set(sft) | set(row) | {k for k, v in harbor.items() if v in sft}
    assert joined >= HARBOR_TRACE_COLUMNS and sft["trial_id"] == row["trial_id"]
    assert isinstance(row["steps"], list)
    assert row["steps"][1]["keystrokes"] == ["echo 0\n"]
    assert resolve_steps(row["steps"], sft["messages"])[2]["observation"] == "x" * 5000  # type: ignore[arg-type]
    assert row["per_turn"][1]["input_tokens"] == 101  # type: ignore[index]
    assert row["failed_tests"] == ["test_two"]
    assert row["instruction"] == "Write hello to /app/out.txt.\n"
    assert (row["episode"], row["result"], row["run_id"]) == ("episode-1", "0.0", "jobs/run-1")
    assert sft["model_provider"] is None and row["verifier_output"] is None
    # Harbor's provenance, when the record has it, goes to Harbor's columns.
    harbor_trial = trial(1).model_copy(update={"job_id": "0f1e-job", "model_provider": "openai",
                                               "verifier_output": "17 passed"})
    build_trajectories(tmp_path / "h", trials=write_trials(tmp_path / "h.jsonl", [harbor_trial]),
                       task_roots=[tasks])
    [sft], [row] = _read(tmp_path / "h", "sft"), _read(tmp_path / "h", "episodes")
    assert (row["run_id"], sft["model_provider"], row["verifier_output"]) == (
        "0f1e-job", "openai", "17 passed")


def test_episodes_repeat_no_sft_text_and_resolve_to_the_full_episode(
        tasks: Path, tmp_path: Path) -> None:
    records = [trial(i, frame=f"frame {i} " + "y" * 3000, messages=False) for i in range(3)]
    records.append(trial(3, frame="z" * 3000))  # recorded messages without the frames
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records), task_roots=[tasks])
    sft = {r["trial_id"]: r for r in _read(out, "sft")}
    episodes = _read(out, "episodes")
    assert set(episodes[0]) & set(sft["alpha__0"]) == {"trial_id"}
    for row, record in zip(episodes, records, strict=True):
        messages = sft[str(row["trial_id"])]["messages"]
        contents = [m["content"] for m in messages]  # type: ignore[attr-defined]
        long_texts = [t for t in _texts(row) if len(t) >= 1000]
        assert not [t for t in long_texts if any(t in c for c in contents if c)]
        expected = [s.model_dump(mode="json") for s in record.episode or []]
        resolved = resolve_steps(row["steps"], messages)  # type: ignore[arg-type]
        assert [(s["message"], s["observation"]) for s in resolved] == \
            [(s["message"], s["observation"]) for s in expected]
    # Rebuilt from the episode, every frame is a span; recorded without it, the frame stays.
    assert all(s["observation_span"] for s in episodes[0]["steps"][1:])  # type: ignore[index]
    assert episodes[3]["steps"][1]["observation"] == "z" * 3000  # type: ignore[index]


def test_files_roll_and_row_groups_stay_bounded(tasks: Path, tmp_path: Path) -> None:
    records = [trial(i, frame=random.Random(i).randbytes(20_000).hex()) for i in range(30)]
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records), task_roots=[tasks],
                       row_group_bytes=200_000, file_bytes=300_000)
    files = sorted((out / "data" / "episodes").glob("*.parquet"))
    assert len(files) > 1
    assert files[0].name == f"train-00000-of-{len(files):05d}.parquet"
    groups = [pq.ParquetFile(f).metadata.row_group(i).num_rows
              for f in files for i in range(pq.ParquetFile(f).metadata.num_row_groups)]
    assert max(groups) <= 3  # 200 kB of ~80 kB rows
    assert sum(groups) == 30
    report = validate_repo(out, secrets=False)
    assert report.findings == []


def test_filter_by_model_and_passed_with_datasets(tasks: Path, tmp_path: Path) -> None:
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", [trial(i) for i in range(9)]),
                       task_roots=[tasks])
    sft = load_dataset(str(out), split="train")
    wins = sft.filter(lambda r: r["passed"] and r["model"] == "org/model-a")
    assert sorted(wins["trial_id"]) == ["alpha__1", "alpha__5", "alpha__7"]
    episodes = load_dataset(str(out), "episodes", split="train", streaming=True)
    assert sum(1 for r in episodes if r["failed_tests"]) == 5


def test_rows_carry_split_pass_rate_and_band_and_the_card_filter_works(
        tasks: Path, tmp_path: Path) -> None:
    records = [trial(i) for i in range(4)] + [trial(i, task_id="bravo") for i in range(4, 7)]
    records[-1].messages, records[-1].episode = None, None  # e.g. lost to infrastructure
    labels = [LabelRow(task_id="alpha", model="org/model-a", scaffold="terminus-2",
                       pass_rate=0.5, band="central", n_counted=8, k=8, n_passed=4),
              LabelRow(task_id="bravo", model="org/model-a", scaffold="terminus-2",
                       pass_rate=1.0, band="one", n_counted=8, k=8, n_passed=8)]
    splits = [SplitRow(task_id="alpha", split="train7", role="train", pass_rate=0.5)]
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records), task_roots=[tasks],
                       labels=labels, splits=splits, environments_repo="lab/our-envs")
    sft = load_dataset("parquet", data_files=str(out / "data" / "sft" / "*.parquet"),
                       split="train")
    keys = {r["trial_id"]: (r["split"], r["pass_rate"], r["band"], r["model_provider"],
                            r["messages_source"]) for r in sft}
    assert keys["alpha__1"] == ("train7", 0.5, "central", "org", "recorded")
    assert keys["alpha__0"] == ("train7", None, None, None, "recorded")  # model-b: no label
    assert keys["bravo__4"][:3] == ("unseen", 1.0, "one")  # no flag: never selected
    assert keys.pop("bravo__6")[4] == "none"  # flagged, not shipped as if it were a chat
    assert {k[4] for k in keys.values()} == {"recorded"}
    # The card's one-line filter, run as written (the repo id swapped for the local files).
    card = (out / "README.md").read_text()
    assert "https://huggingface.co/datasets/lab/our-envs" in card  # links follow the ids given
    assert "ai-and/termgrade-environments" not in card
    code = card.split("without leaking benchmark")[1].split("```python\n")[1].split("```")[0]
    assert "'train7'" in code
    local = code.replace('load_dataset("ai-and/termgrade-trajectories", split="train")',
                         "sft")
    scope: dict[str, object] = {"sft": sft}
    exec(local, scope)
    wins = scope["train_wins"]
    assert sorted(r["trial_id"] for r in wins) == ["alpha__1", "alpha__3"]  # type: ignore[attr-defined]
    # Without split flags the rows say nothing, and the card says to join before training.
    bare = tmp_path / "bare"
    build_trajectories(bare, trials=write_trials(tmp_path / "t.jsonl", records), task_roots=[tasks])
    row = pq.read_table(bare / "data" / "sft" / "train-00000-of-00001.parquet").to_pylist()[0]
    assert (row["split"], row["pass_rate"], row["band"]) == (None, None, None)
    assert "benchmark tasks leak into training data" in (bare / "README.md").read_text()
