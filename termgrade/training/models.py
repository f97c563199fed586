"""One model identity from grading to training: the model a repo's tasks were selected for,
the model a run trains, and verl's tool-call parser for that model's family.

Difficulty belongs to task x model x scaffold (SPEC section 6): the bandcentral repo's rows
record the model and scaffold whose measured pass rates chose them (``base_model``,
``base_scaffold``). ``train prepare`` trains that model unless told otherwise, and says
why another model defeats the selection.

The parser table maps a model id to the name verl 0.9.1 registers for its tool-call
syntax (``verl.experimental.agent_loop.tool_parser``): a parser that does not match the
model's syntax makes every turn invalid, every reward 0 and every group all-equal, so
dynamic sampling would regenerate forever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from termgrade.core.errors import OptionError

VERL_TOOL_PARSERS = ("hermes", "gpt-oss", "qwen3_coder", "glm", "seed", "minimax", "kimi",
                     "deepseek_v4", "gemma4")
"""The parsers verl 0.9.1 registers (``ToolParser._registry``); a test compares them."""


@dataclass(frozen=True)
class ModelFamily:
    name: str
    pattern: str
    """A regular expression searched in the lower-cased model id."""
    tool_parser: str | None
    """verl 0.9.1's parser for the family's tool-call syntax; None: verl has none."""
    smoke_model: str | None
    """A small model of the family for ``train prepare --smoke`` (one GPU)."""
    note: str = ""


FAMILIES: tuple[ModelFamily, ...] = (
    ModelFamily("gemma-4", r"gemma-?4", "gemma4", "google/gemma-4-E2B-it",
                "<|tool_call>call:name{...}<tool_call|>"),
    ModelFamily("qwen3-coder", r"qwen3-coder", "qwen3_coder", None,
                "XML <function=...> calls; no small Qwen3-Coder exists"),
    ModelFamily("qwen", r"qwen(2\.5|3)", "hermes", "Qwen/Qwen3-1.7B",
                "<tool_call>{json}</tool_call> (Hermes style)"),
    ModelFamily("gpt-oss", r"gpt-oss", "gpt-oss", "openai/gpt-oss-20b", "harmony channels"),
    ModelFamily("glm", r"glm-?4", "glm", None, "<tool_call>name<arg_key>..."),
    ModelFamily("kimi", r"kimi", "kimi", None, "<|tool_call_begin|>..."),
    ModelFamily("deepseek-v4", r"deepseek-v4", "deepseek_v4", None, "DeepSeek V4 DSML"),
    ModelFamily("minimax", r"minimax", "minimax", None, "<minimax:tool_call>"),
    ModelFamily("seed", r"seed-oss", "seed", None, "<seed:tool_call>"),
    ModelFamily("llama", r"llama", None, "meta-llama/Llama-3.2-1B-Instruct",
                "Llama 3.x JSON / <|python_tag|> calls: verl 0.9.1 has no parser for them"),
)


def model_family(model: str) -> ModelFamily | None:
    """The family of ``model`` (a Hub id, a served name or a local path), or None."""
    text = model.lower()
    for family in FAMILIES:
        if re.search(family.pattern, text):
            return family
    return None


def tool_parser_for(model: str, explicit: str | None = None) -> tuple[str, str]:
    """(verl parser name, where it came from) for ``model``; ``explicit`` wins."""
    if explicit is not None:
        if explicit not in VERL_TOOL_PARSERS:
            raise OptionError(f"--tool-parser {explicit!r}: not a verl 0.9.1 tool parser",
                              fix="pick one of: " + ", ".join(VERL_TOOL_PARSERS))
        return explicit, "--tool-parser"
    family = model_family(model)
    if family is None:
        raise OptionError(f"no known tool-call syntax for model {model!r}",
                          fix="pass --tool-parser with the verl parser that matches its chat "
                              "template (" + ", ".join(VERL_TOOL_PARSERS) + ")")
    if family.tool_parser is None:
        raise OptionError(f"model {model!r} ({family.name}): {family.note}",
                          fix="train a model whose syntax verl parses, or pass --tool-parser "
                              "if this checkpoint's template emits one of: "
                              + ", ".join(VERL_TOOL_PARSERS))
    return family.tool_parser, f"family {family.name}"


def model_key(model: str) -> str:
    """What names one model across a Hub id, a served name and a local copy: the last path
    component, lower-cased (``google/gemma-4-31B-it`` and ``/models/gemma-4-31b-it``)."""
    return model.rstrip("/").rsplit("/", 1)[-1].lower()


def same_model(a: str, b: str) -> bool:
    return model_key(a) == model_key(b)


def other_model_warning(selected_for: str, scaffold: str | None, trained: str) -> str:
    """Why training another model on these tasks is a bad idea (printed and recorded)."""
    graded = f"{selected_for}" + (f" in the {scaffold} scaffold" if scaffold else "")
    return (f"training {trained}, but these tasks were selected for {graded}: difficulty "
            "belongs to task x model x scaffold, so their pass rates for another model are "
            "unmeasured; groups that are all-pass or all-fail carry no gradient and dynamic "
            "sampling regenerates them. Regrade the tasks with this model (`termgrade grade`) "
            "and reselect (`termgrade select`) instead.")


@dataclass(frozen=True)
class ModelChoice:
    """What a run trains, and why."""

    model: str
    tool_parser: str
    parser_source: str
    selected_for: str | None
    """The model the repo's tasks were selected for (``base_model``), if recorded."""
    scaffold: str | None
    warnings: tuple[str, ...] = ()
    train_scaffold: str | None = None
    """The scaffold the run trains in (a trainable one: the scaffold door says which)."""


def choose_model(selected_for: str | None, scaffold: str | None, *, default: str,
                 asked: str | None = None, tool_parser: str | None = None,
                 train_other_model: bool = False, smoke: bool = False) -> ModelChoice:
    """The model to train: the one the tasks were selected for, ``asked`` when it names the
    same model (a local copy), another only with ``train_other_model``. ``smoke`` swaps in
    the family's small model (a one-GPU check of the loop, not a training run)."""
    from termgrade.agent.scaffolds import DEFAULT_SCAFFOLD, trainable_scaffolds, training_scaffold

    warnings: list[str] = []
    trained_in = training_scaffold(scaffold)
    if trained_in is None:  # selected in a scaffold the door says cannot be trained
        trainable = ", ".join(trainable_scaffolds())
        text = (f"the tasks were selected in the {scaffold} scaffold, the run trains in "
                f"{DEFAULT_SCAFFOLD}: difficulty belongs to task x model x scaffold "
                f"(trainable scaffolds: {trainable})")
        if not train_other_model:
            raise OptionError(text, fix=f"regrade in {DEFAULT_SCAFFOLD} (`termgrade grade`) "
                              "and reselect, or pass --train-other-model to train anyway")
        warnings.append(text)
        trained_in = training_scaffold(None)
    if selected_for is None:
        model = asked or default
        warnings.append(f"the repo does not record the model its tasks were selected for "
                        f"(built without labels): training {model} on unmeasured tasks")
    elif asked is None or same_model(asked, selected_for):
        model = asked or selected_for
    elif train_other_model:
        model = asked
        warnings.append(other_model_warning(selected_for, scaffold, asked))
    else:
        raise OptionError(other_model_warning(selected_for, scaffold, asked),
                          fix=f"drop --base-model to train {selected_for} (or pass a local "
                              "copy of it), or pass --train-other-model to train anyway")
    if smoke and not (asked and train_other_model):
        family = model_family(model)
        if family is None or family.smoke_model is None:
            raise OptionError(f"no small model known for {model!r}'s family",
                              fix="pass --base-model with a small model of the same family "
                                  "and --train-other-model")
        if not same_model(family.smoke_model, model):
            warnings.append(f"smoke run: {family.smoke_model}, a small model of the "
                            f"{family.name} family, stands in for {model}; its rewards show "
                            "that the loop works, not what the real run learns")
        model = family.smoke_model
    parser, source = tool_parser_for(model, tool_parser)
    assert trained_in is not None
    return ModelChoice(model, parser, source, selected_for, scaffold, tuple(warnings),
                       trained_in.name)
