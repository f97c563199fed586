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
from termgrade.agents import ModelAgent
from termgrade.builders.trajectories import build_trajectories
from termgrade.grade import TRIALS_FILE, grade_model
from tests.support.scripted_tools import STAND_IN_MODEL, ScriptedToolEndpoint, replay_solution

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
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


def test_a_graded_bash_tool_trial_renders_through_a_chat_template(tmp_path: Path) -> None:
    from datasets import load_dataset

    solve = (TASK / "solution" / "solve.sh").read_text()
    with ScriptedToolEndpoint(replay_solution(solve)) as llm:
        agent = ModelAgent(Endpoint(llm.url, STAND_IN_MODEL, api_key_env=None),
                           ScaffoldConfig())
        report = grade_model([TASK], agent, tmp_path / "run", k=1, workers=1, progress=False)
    assert report.pass_rate == 1.0
    out = tmp_path / "traj"
    build_trajectories(tmp_path / "run" / TRIALS_FILE, out, task_roots=[ROOT / "environments"])

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
