"""One model identity from grading to training: the parser table (one case per family)
and the choice of the model to train."""

from __future__ import annotations

import pytest

from termgrade.core.errors import OptionError
from termgrade.training.models import (
    FAMILIES,
    VERL_TOOL_PARSERS,
    choose_model,
    model_family,
    tool_parser_for,
)

PAPER = "google/gemma-4-31B-it"


@pytest.mark.parametrize(("model", "family", "parser"), [
    ("google/gemma-4-31B-it", "gemma-4", "gemma4"),
    ("gemma4-31b-it", "gemma-4", "gemma4"),
    ("Qwen/Qwen3-8B", "qwen", "hermes"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen", "hermes"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder", "qwen3_coder"),
    ("openai/gpt-oss-120b", "gpt-oss", "gpt-oss"),
    ("zai-org/GLM-4.6", "glm", "glm"),
    ("moonshotai/Kimi-K2-Instruct", "kimi", "kimi"),
    ("deepseek-ai/DeepSeek-V4", "deepseek-v4", "deepseek_v4"),
    ("MiniMaxAI/MiniMax-M2", "minimax", "minimax"),
    ("ByteDance-Seed/Seed-OSS-36B-Instruct", "seed", "seed"),
])
def test_each_family_gets_its_parser(model: str, family: str, parser: str) -> None:
    found = model_family(model)
    assert found is not None and found.name == family
    assert tool_parser_for(model) == (parser, f"family {family}")


def test_every_family_is_tested_and_names_a_verl_parser() -> None:
    import inspect
    import sys

    text = inspect.getsource(sys.modules[__name__])
    for family in FAMILIES:
        assert f'"{family.name}"' in text, family.name
        assert family.tool_parser is None or family.tool_parser in VERL_TOOL_PARSERS


def test_llama_has_no_verl_parser_and_says_so() -> None:
    with pytest.raises(OptionError, match=r"(?s)Llama.*no parser.*--tool-parser") as caught:
        tool_parser_for("meta-llama/Llama-3.1-8B-Instruct")
    assert "llama" in str(caught.value).lower()
    assert tool_parser_for("meta-llama/Llama-3.1-8B-Instruct", "hermes") == (
        "hermes", "--tool-parser")


def test_unknown_model_and_unknown_parser_are_refused() -> None:
    with pytest.raises(OptionError, match="no known tool-call syntax") as caught:
        tool_parser_for("acme/frontier-7b")
    assert "--tool-parser" in caught.value.fix
    with pytest.raises(OptionError, match=r"not a verl 0\.9\.1 tool parser"):
        tool_parser_for(PAPER, "gemma3")


def test_the_selected_model_is_trained_by_default() -> None:
    choice = choose_model("Qwen/Qwen3-8B", "bash-tool", default=PAPER)
    assert (choice.model, choice.tool_parser, choice.warnings) == ("Qwen/Qwen3-8B", "hermes", ())


def test_a_local_copy_of_the_selected_model_is_the_same_model() -> None:
    choice = choose_model(PAPER, "bash-tool", default=PAPER, asked="/models/gemma-4-31b-it/")
    assert choice.model == "/models/gemma-4-31b-it/" and choice.tool_parser == "gemma4"
    assert choice.warnings == ()


def test_another_model_needs_the_flag_and_is_told_why() -> None:
    with pytest.raises(OptionError, match="difficulty belongs to task x model x scaffold") as c:
        choose_model(PAPER, "bash-tool", default=PAPER, asked="Qwen/Qwen3-8B")
    assert "--train-other-model" in c.value.fix
    choice = choose_model(PAPER, "bash-tool", default=PAPER, asked="Qwen/Qwen3-8B",
                          train_other_model=True)
    assert choice.model == "Qwen/Qwen3-8B" and choice.tool_parser == "hermes"
    assert any("regrade" in w.lower() for w in choice.warnings)


def test_another_scaffold_needs_the_flag() -> None:
    with pytest.raises(OptionError, match="terminus-2 scaffold"):
        choose_model(PAPER, "terminus-2", default=PAPER)
    assert choose_model(PAPER, "terminus-2", default=PAPER, train_other_model=True).warnings


def test_unrecorded_selection_falls_back_with_a_warning() -> None:
    choice = choose_model(None, None, default=PAPER)
    assert choice.model == PAPER and "does not record" in choice.warnings[0]


def test_smoke_takes_the_small_model_of_the_family() -> None:
    gemma = choose_model(PAPER, "bash-tool", default=PAPER, smoke=True)
    assert (gemma.model, gemma.tool_parser) == ("google/gemma-4-E2B-it", "gemma4")
    assert "stands in for google/gemma-4-31B-it" in gemma.warnings[0]
    qwen = choose_model("Qwen/Qwen3-32B", "bash-tool", default=PAPER, smoke=True)
    assert (qwen.model, qwen.tool_parser) == ("Qwen/Qwen3-1.7B", "hermes")
    with pytest.raises(OptionError, match="no small model"):
        choose_model("zai-org/GLM-4.6", "bash-tool", default=PAPER, smoke=True)


@pytest.mark.parametrize(("model", "text"), [
    ("Qwen/Qwen3-8B",
     'Listing.<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la /app"}}\n'
     "</tool_call>"),
    ("google/gemma-4-31B-it",
     'Listing.<|tool_call>call:bash{command:<|"|>ls -la /app<|"|>}<tool_call|>'),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct",
     "Listing.<tool_call>\n<function=bash>\n<parameter=command>\nls -la /app\n</parameter>\n"
     "</function>\n</tool_call>"),
])
def test_the_chosen_parser_reads_its_familys_calls(verl: object, model: str,
                                                   text: str) -> None:
    """verl's own parser, picked by the table, reads a bash call in the family's syntax
    (a tokenizer built here with the family's special tokens)."""
    import asyncio
    import json

    from verl.experimental.agent_loop.tool_parser import ToolParser

    from tests.support.tiny_tokenizer import GEMMA4_SPECIAL, tiny_tokenizer_with

    tokenizer = tiny_tokenizer_with(*GEMMA4_SPECIAL)
    parser = ToolParser.get_tool_parser(tool_parser_for(model)[0], tokenizer)
    ids = tokenizer.encode(text, add_special_tokens=False)
    content, calls = asyncio.run(parser.extract_tool_calls(ids))
    assert content.strip() == "Listing."
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("bash", {"command": "ls -la /app"})]
    other = "hermes" if tool_parser_for(model)[0] != "hermes" else "gemma4"
    _, misread = asyncio.run(ToolParser.get_tool_parser(other, tokenizer)
                             .extract_tool_calls(ids))
    assert [(c.name, json.loads(c.arguments)) for c in misread] != [
        ("bash", {"command": "ls -la /app"})]
