"""The ``sft`` rows carry the tools their scaffold offered (``tools``), the Hub traces too,
``validate`` checks them, and the parsed-arguments form is one step on the loaded rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from termgrade.agent import SCAFFOLD_NAME, TOOLS
from termgrade.builders.sft_messages import with_parsed_arguments
from termgrade.builders.trajectories import build_trajectories
from termgrade.records import ChatMessage, TrialRecord
from termgrade.records.trial import ToolCall, ToolFunction
from termgrade.validate import validate_repo
from termgrade.validate.trajectories_check import tools_problem
from tests.support.records import trial, write_trials
from tests.support.task_dirs import MakeTask

COMMAND = 'printf \'a "quoted" line\\n\' > /app/out.txt'


def bash_tool_trial(i: int) -> TrialRecord:
    record = trial(i)
    record.scaffold = SCAFFOLD_NAME
    record.messages = [
        ChatMessage(role="system", content="You are an expert."),
        ChatMessage(role="user", content="Write the line."),
        ChatMessage(role="assistant", content=None, tool_calls=[ToolCall(
            id="c0", function=ToolFunction(name="bash",
                                           arguments=json.dumps({"command": COMMAND})))]),
        ChatMessage(role="tool", tool_call_id="c0", name="bash", content='a "quoted" line'),
        ChatMessage(role="assistant", content="Done.", tool_calls=[
            ToolCall(id="c1", function=ToolFunction(name="finish", arguments="{}")),
            ToolCall(id="c2", function=ToolFunction(name="bash", arguments='{"command": "ls'))]),
    ]
    return record


@pytest.fixture
def repo(make_task: MakeTask, tmp_path: Path) -> Path:
    tasks = make_task("alpha").parent
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl",
                                                [bash_tool_trial(1), trial(2)]),
                       task_roots=[tasks])
    return out


def _sft(repo: Path) -> Any:
    return load_dataset("parquet", data_files=str(repo / "data" / "sft" / "*.parquet"),
                        split="train", cache_dir=str(repo.parent / "hf-cache"))


def test_every_sft_row_carries_its_scaffolds_tools(repo: Path) -> None:
    sft = _sft(repo)
    assert sft.features["tools"].dtype in ("large_string", "string")
    bash, terminus = list(sft)
    assert json.loads(bash["tools"]) == list(TOOLS)  # exactly what the scaffold offered
    assert terminus["tools"] is None and terminus["scaffold"] == "terminus-2"
    episodes = pq.read_table(repo / "data" / "episodes").to_pylist()
    assert [e["tool_definitions"] for e in episodes] == [bash["tools"], None]
    # The Hub trace's session line names them as well.
    header = json.loads((repo / "traces" / "train" / "alpha" / "alpha__1.jsonl")
                        .read_text().splitlines()[0])
    assert header["tools"] == list(TOOLS)
    other = json.loads((repo / "traces" / "train" / "alpha" / "alpha__2.jsonl")
                       .read_text().splitlines()[0])
    assert other["tools"] is None


def test_the_card_documents_tools_and_which_form_suits_which_template(repo: Path) -> None:
    card = (repo / "README.md").read_text()
    configs = card.split("- `sft` (default)")[1].split("- `episodes`:")[0]
    assert "`tools`" in configs and "SFTTrainer" in configs
    assert "tojson" in configs and "Hermes" in configs and "Gemma" in configs
    assert "| `tools` | large_string (nullable) |" in card  # the field table


def test_parsed_arguments_are_one_step_and_keep_each_calls_own_keys(repo: Path) -> None:
    sft = _sft(repo)
    parsed = with_parsed_arguments(sft)
    calls = [c for m in parsed[0]["messages"] for c in m["tool_calls"] or []]
    assert [c["function"]["arguments"] for c in calls] == [
        {"command": COMMAND}, {}, '{"command": "ls']  # malformed: the model's text
    assert parsed[0]["tools"] == sft[0]["tools"] and parsed[1]["messages"] == sft[1]["messages"]
    # The wire form itself is untouched in the repo.
    assert sft[0]["messages"][2]["tool_calls"][0]["function"]["arguments"] == json.dumps(
        {"command": COMMAND})


def _rewrite(path: Path, column: str, values: list[Any]) -> None:
    table = pq.read_table(path)
    index = table.schema.get_field_index(column)
    table = table.set_column(index, table.schema.field(column),
                             pa.array(values, table.schema.field(column).type))
    pq.write_table(table, path)


def _findings(repo: Path) -> list[str]:
    report = validate_repo(repo, load=False, secrets=False, cache=False)
    return [f"{f.field}: {f.message}" for f in report.findings if f.check == "trajectories"]


def test_validate_passes_the_built_repo(repo: Path) -> None:
    report = validate_repo(repo, load=False, secrets=False, cache=False)
    assert report.ok, [str(f) for f in report.findings]
    assert "trajectories" in report.passed


@pytest.mark.parametrize(("tools", "said"), [
    ('[{"name": "bash"}]', "not {"),
    ("[bash]", "not JSON"),
    ("[]", "non-empty"),
    (json.dumps([TOOLS[0], TOOLS[0]]), "repeat"),
    (json.dumps([TOOLS[1]]), "differs from its sft row's tools"),
])
def test_validate_refuses_tools_a_template_cannot_use(repo: Path, tools: str,
                                                      said: str) -> None:
    sft = next((repo / "data" / "sft").glob("*.parquet"))
    _rewrite(sft, "tools", [tools, None])
    findings = _findings(repo)
    assert findings and said in findings[0], findings


def test_tools_problem_names_what_is_wrong() -> None:
    assert tools_problem(None) is None and tools_problem(json.dumps(list(TOOLS))) is None
    bad = {"type": "function", "function": {"name": "x", "parameters": []}}
    assert "parameters" in str(tools_problem(json.dumps([bad])))
