"""A bash-tool trial, end to end into a chat template: the real scaffold grades a task
against a scripted endpoint, `build trajectories` packs the trial, `load_dataset` reads the
`sft` row back, and a tokenizer built here (a word-level vocabulary trained on the spot,
with a tool-calling chat template written for this test) renders ``messages`` unmodified,
with the tools from the episode row's ``tool_definitions``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from termgrade.agent import SCAFFOLD_NAME, TOOLS, Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.builders.sft_messages import for_template, malformed_calls
from termgrade.builders.trajectories import build_trajectories
from termgrade.grade import TRIALS_FILE, grade_model
from tests.support.scripted_tools import STAND_IN_MODEL, ScriptedToolEndpoint, replay_solution

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")


ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "environments" / "word-frequency"

# Hermes-style tool calling, as many open chat models render it: tools in the system turn,
# each call a <tool_call> JSON block, each tool reply a <tool_response> in a user-side turn.
# A call's arguments are a JSON text (the OpenAI form) or a mapping.
CHAT_TEMPLATE = """\
{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'system' %}
{%- elif message.role == 'tool' %}<|im_start|>user
<tool_response name="{{ message.name }}" id="{{ message.tool_call_id }}">
{{ message.content }}
</tool_response><|im_end|>
{% else %}<|im_start|>{{ message.role }}
{% if message.reasoning_content %}<think>{{ message.reasoning_content }}</think>
{% endif %}{% if message.content %}{{ message.content }}
{% endif %}{% for call in message.tool_calls or [] %}<tool_call>
{"name": "{{ call.function.name }}", "arguments": {% if call.function.arguments is string %}\
{{ call.function.arguments }}{% else %}{{ call.function.arguments | tojson }}{% endif %}}
</tool_call>
{% endfor %}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


def local_tokenizer(corpus: list[str]) -> Any:
    """A word-level tokenizer trained here on ``corpus`` (no download), with the template."""
    model = tokenizers.models.WordLevel(unk_token="<unk>")
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(
        special_tokens=["<unk>", "<|im_start|>", "<|im_end|>"])
    tok.train_from_iterator(corpus, trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", chat_template=CHAT_TEMPLATE,
        additional_special_tokens=["<|im_start|>", "<|im_end|>"])


@pytest.mark.docker
@pytest.mark.slow
def test_a_graded_bash_tool_trial_renders_through_a_chat_template(tmp_path: Path) -> None:
    from datasets import load_dataset

    solve = (TASK / "solution" / "solve.sh").read_text()
    with ScriptedToolEndpoint(replay_solution(solve)) as llm:
        agent = ModelAgent(Endpoint(llm.url, STAND_IN_MODEL, api_key_env=None),
                           ScaffoldConfig())
        report = grade_model([TASK], agent, tmp_path / "run", k=1, workers=1, progress=False)
    assert report.pass_rate == 1.0
    out = tmp_path / "traj"
    build_trajectories(out, trials=tmp_path / "run" / TRIALS_FILE,
                       task_roots=[ROOT / "environments"])

    sft = load_dataset("parquet", data_files=str(out / "data" / "sft" / "*.parquet"),
                       split="train")
    episodes = load_dataset("parquet", data_files=str(out / "data" / "episodes" / "*.parquet"),
                            split="train")
    [row], [episode] = list(sft), list(episodes)
    assert (row["scaffold"], row["messages_source"]) == (SCAFFOLD_NAME, "chat")
    messages = row["messages"]
    tools = json.loads(episode["tool_definitions"])
    assert tools == list(TOOLS)
    calls = [c for m in messages if m["tool_calls"] for c in m["tool_calls"]]
    answers = [m for m in messages if m["role"] == "tool"]
    assert [c["function"]["name"] for c in calls][-1] == "finish"
    assert {a["tool_call_id"] for a in answers} <= {c["id"] for c in calls}
    assert any(a["name"] == "bash" for a in answers)

    texts = [m["content"] or "" for m in messages] + [c["function"]["arguments"] for c in calls]
    tokenizer = local_tokenizer([*texts, json.dumps(tools)])
    rendered = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    # Every message, call and tool reply is in the text, in the order of the transcript.
    position = 0
    for message in messages:
        pieces = [message["content"]] if message["content"] else []
        pieces += [c["function"]["arguments"] for c in message["tool_calls"] or []]
        for piece in pieces:
            found = rendered.find(piece, position)
            assert found >= 0, f"{message['role']} text missing or out of order: {piece[:80]!r}"
            position = found + len(piece)
    assert rendered.count("<tool_call>") == len(calls)
    assert rendered.count("<tool_response") == len(answers)
    assert '"name": "bash"' in rendered.split("</tools>")[0]  # the tools, in the system turn
    ids = tokenizer.apply_chat_template(messages, tools=tools, tokenize=True)
    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    assert len(ids) > 50 and ids[0] == tokenizer.convert_tokens_to_ids("<|im_start|>")


# -- the three conventions chat templates use for a call's arguments ------------------------

_TURNS = """\
{%- for message in messages %}
{%- if message.role == 'tool' %}<tool_response>{{ message.content }}</tool_response>
{% elif message.role == 'assistant' %}<assistant>{{ message.content or '' }}
{%- for call in message.tool_calls or [] %}CALL{% endfor %}</assistant>
{% else %}<{{ message.role }}>{{ message.content }}</{{ message.role }}>
{% endif %}
{%- endfor %}"""

TEMPLATES = {
    # OpenAI / Hermes-style: the arguments text as it is
    "string": _TURNS.replace("CALL", '<tool_call>{"name": "{{ call.function.name }}", '
                                     '"arguments": {{ call.function.arguments }}}</tool_call>'),
    # Llama 3.1 / Qwen2.5 style: the arguments encoded by the template
    "mapping": _TURNS.replace("CALL", '<tool_call>{"name": "{{ call.function.name }}", '
                                      '"arguments": {{ call.function.arguments | tojson }}}'
                                      '</tool_call>'),
    # Gemma 4 style: each argument, strings between <|"|> delimiters
    "gemma": _TURNS.replace("CALL", "<|tool_call>call:{{ call.function.name }}{{ '{' }}"
                                    '{%- for key, value in call.function.arguments.items() %}'
                                    '{{ key }}:<|"|>{{ value }}<|"|>'
                                    "{%- if not loop.last %},{% endif %}{%- endfor %}"
                                    "{{ '}' }}<tool_call|>"),
}

COMMAND = 'printf \'a "quoted" line\\n\' > /app/out.txt && cat /app/out.txt'
"""A command with quotes, a backslash and an ampersand: any second encoding shows."""


def _sft_messages(tmp_path: Path) -> list[dict[str, Any]]:
    """A bash-tool trial's messages as the trajectories repo stores them (built here)."""
    from datasets import load_dataset

    from termgrade.records import ChatMessage
    from termgrade.records.trial import ToolCall, ToolFunction
    from tests.support.records import trial, write_trials
    from tests.support.task_dirs import write_task

    record = trial(1)
    record.scaffold = SCAFFOLD_NAME
    record.messages = [
        ChatMessage(role="user", content="Write the line."),
        ChatMessage(role="assistant", content=None, tool_calls=[ToolCall(
            id="c0", function=ToolFunction(name="bash",
                                           arguments=json.dumps({"command": COMMAND})))]),
        ChatMessage(role="tool", tool_call_id="c0", name="bash", content='a "quoted" line'),
        ChatMessage(role="assistant", content="Done.", tool_calls=[ToolCall(
            id="c1", function=ToolFunction(name="finish", arguments="{}"))])]
    write_task(tmp_path / "tasks", "alpha")
    build_trajectories(tmp_path / "traj", trials=write_trials(tmp_path / "trials.jsonl", [record]),
                       task_roots=[tmp_path / "tasks"])
    [row] = list(load_dataset("parquet", split="train", data_files=str(
        tmp_path / "traj" / "data" / "sft" / "*.parquet")))
    return list(row["messages"])


def _render(messages: list[dict[str, Any]], convention: str) -> str:
    from tests.support.tiny_tokenizer import tiny_tokenizer

    return str(tiny_tokenizer().apply_chat_template(
        messages, chat_template=TEMPLATES[convention], tokenize=False))


@pytest.mark.parametrize("convention", ["string", "mapping", "gemma"])
def test_tool_call_arguments_render_encoded_exactly_once(tmp_path: Path,
                                                         convention: str) -> None:
    wire = _sft_messages(tmp_path)
    assert wire[1]["tool_calls"][0]["function"]["arguments"] == json.dumps({"command": COMMAND})
    rendered = _render(for_template(wire, convention), convention)
    once = json.dumps(COMMAND)  # the command as a JSON string: encoded once
    twice = json.dumps(json.dumps({"command": COMMAND}))
    if convention == "gemma":
        assert rendered.count(f'command:<|"|>{COMMAND}<|"|>') == 1
        assert "call:finish{}" in rendered
    else:
        assert rendered.count(once) == 1, rendered
        assert '"arguments": {}}' in rendered  # finish, no arguments
    assert twice not in rendered and json.dumps(once) not in rendered
    assert rendered.count("<tool_response>") == 1


def test_the_wire_form_is_double_encoded_by_a_tojson_template(tmp_path: Path) -> None:
    """Why the mapping form exists: the stored text through ``| tojson`` is a quoted string
    (what SFT would teach the model to emit), and a Gemma-style template cannot iterate it."""
    wire = _sft_messages(tmp_path)
    assert json.dumps(json.dumps({"command": COMMAND}), ensure_ascii=False) in _render(
        wire, "mapping")
    with pytest.raises(Exception, match="items"):
        _render(wire, "gemma")


def test_malformed_arguments_stay_as_written_and_are_named() -> None:
    messages = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "bad", "type": "function", "function": {"name": "bash",
                                                       "arguments": '{"command": "ls'}},
        {"id": "ok", "type": "function", "function": {"name": "bash",
                                                      "arguments": '{"command": "ls"}'}}]}]
    mapped = for_template(messages, "mapping")
    assert mapped[0]["tool_calls"][0]["function"]["arguments"] == '{"command": "ls'
    assert mapped[0]["tool_calls"][1]["function"]["arguments"] == {"command": "ls"}
    assert messages[0]["tool_calls"][1]["function"]["arguments"] == '{"command": "ls"}'
    assert malformed_calls(messages) == ["bad"]
    with pytest.raises(ValueError, match="convention"):
        for_template(messages, "xml")
