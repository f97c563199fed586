"""A tiny tokenizer built here, for the training tests (no model download).

Byte-level BPE (every text round-trips exactly) trained in a fraction of a second on a
few lines of shell and tool-call text, with the special tokens and a Qwen2.5-style chat
template in the Hermes tool-call format verl's ``hermes`` parser reads:
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, tool replies inside
``<tool_response>`` in a user turn, ``<|im_end|>`` as end of turn.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
           "<tool_response>", "</tool_response>"]

CHAT_TEMPLATE = r"""
{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}
{{- '# Tools\n<tools>' }}
{%- for tool in tools %}{{- '\n' + (tool | tojson) }}{%- endfor %}
{{- '\n</tools><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' + (message.content or '') }}
{%- for call in message.tool_calls or [] %}
{%- set args = call.function.arguments %}
{{- '<tool_call>\n{"name": "' + call.function.name + '", "arguments": ' }}
{{- (args if args is string else (args | tojson)) + '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
{{- '<|im_start|>user' }}
{%- endif %}
{{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""

CORPUS = [
    'echo hello > /app/out.txt && cat /app/out.txt',
    '{"name": "bash", "arguments": {"command": "ls -la /app"}}',
    '{"name": "finish", "arguments": {}}',
    "[exit status 0]\nhello\n",
    "You are an expert Linux engineer working in a terminal. Run commands with bash.",
    "Write hello to /app/out.txt. The task is done; it will now be graded.",
]


@lru_cache(maxsize=1)
def tiny_tokenizer() -> Any:
    """A ``PreTrainedTokenizerFast`` of about 400 tokens (deterministic)."""
    return tiny_tokenizer_with()


GEMMA4_SPECIAL = ("<|tool_call>", "<tool_call|>", '<|"|>')
"""Gemma 4's tool-call delimiters (verl's ``gemma4`` parser stops on ``<tool_call|>``)."""


@lru_cache(maxsize=4)
def tiny_tokenizer_with(*extra_special: str) -> Any:
    """The tiny tokenizer with more special tokens (another family's tool-call syntax)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    specials = [*SPECIAL, *extra_special]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator(CORPUS * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>",
                                        additional_special_tokens=specials[3:])
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer
