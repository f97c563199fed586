"""The trajectories' ``sft`` messages in the form a model's chat template needs.

The rows keep the OpenAI wire form: a tool call's ``function.arguments`` is the JSON text
the model wrote (possibly malformed). Chat templates take it in one of three conventions:

* **string**: the template prints ``arguments`` as it is (the OpenAI form; Hermes-style
  templates that test ``arguments is string``): the wire form renders as written.
* **mapping**: the template encodes ``arguments | tojson`` (Llama 3.1, Qwen2.5, Qwen3
  style): the wire form's text would be encoded a second time (a quoted JSON string),
  teaching the model to emit one. These need :func:`with_argument_mappings`.
* **gemma**: the template iterates ``arguments.items()`` (Gemma 4's
  ``call:name{key:<|"|>value<|"|>}``): a text has no items; it needs the mapping too.

``tests/builders/test_sft_chat_template.py`` renders a trial through a local template of each
convention and checks that every call's arguments appear encoded exactly once.

The rows keep the wire form; the parsed form is one step on the loaded dataset,
:func:`with_parsed_arguments` (``datasets``' ``Json`` feature holds a mapping whose keys
differ from call to call, where an Arrow struct would give every call every key). The
row's ``tools`` column (JSON text) goes to the template as ``tools=json.loads(...)``; TRL's
``SFTTrainer`` reads it as it is (``tests/builders/test_sft_trl.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

CONVENTIONS = ("string", "mapping", "gemma")


def _parsed(arguments: Any) -> Any:
    """A JSON object text as its mapping; anything else (already a mapping, malformed, or
    JSON that is not an object) as it is."""
    if not isinstance(arguments, str):
        return arguments
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        return arguments
    return value if isinstance(value, dict) else arguments


def with_argument_mappings(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` whose tool calls carry ``function.arguments`` as a mapping,
    for templates that ``tojson`` or iterate it. Arguments that are not a JSON object (a
    malformed call) stay the model's text: such a turn cannot be rendered in those
    templates' syntax, so drop the row or its call when training on them
    (:func:`malformed_calls` finds them)."""
    out = []
    for message in messages:
        copy = dict(message)
        calls = message.get("tool_calls")
        if calls:
            copy["tool_calls"] = [
                {**call, "function": {**call["function"],
                                      "arguments": _parsed(call["function"]["arguments"])}}
                for call in calls]
        out.append(copy)
    return out


def malformed_calls(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ids of tool calls whose arguments are not a JSON object."""
    return [str(call.get("id")) for message in messages
            for call in message.get("tool_calls") or []
            if not isinstance(_parsed(call["function"]["arguments"]), dict)]


def with_parsed_arguments(dataset: Any) -> Any:
    """An ``sft`` :class:`datasets.Dataset` whose tool calls carry ``function.arguments`` as a
    mapping (:func:`with_argument_mappings` on every row; a malformed call stays the model's
    text), for a template that ``tojson``s or iterates arguments: pass the result to the
    trainer in place of the loaded rows. Stored as ``datasets.Json``, so each call keeps
    exactly its own keys."""
    from datasets import Json

    features = dataset.features.copy()
    features["messages"].feature["tool_calls"].feature["function"]["arguments"] = Json()
    return dataset.map(lambda row: {"messages": with_argument_mappings(row["messages"])},
                       features=features)


def for_template(messages: Iterable[Mapping[str, Any]], convention: str) -> list[dict[str, Any]]:
    """``messages`` for a template of ``convention`` (one of :data:`CONVENTIONS`)."""
    if convention not in CONVENTIONS:
        raise ValueError(f"convention {convention!r}: one of {', '.join(CONVENTIONS)}")
    if convention == "string":
        return [dict(m) for m in messages]
    return with_argument_mappings(messages)
