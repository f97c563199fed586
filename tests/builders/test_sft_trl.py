"""``load_dataset(repo, "sft")`` passed straight to TRL's ``SFTTrainer`` puts the tool
schemas in the training text: a trajectories repo is built here from a bash-tool trial,
loaded by its card's configs, and trained on for one step (CPU) with a tokenizer and a
model made in the test (:mod:`tests.support.tiny_tokenizer`, a one-layer Qwen2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from termgrade.agent import TOOLS
from termgrade.builders.trajectories import build_trajectories
from tests.builders.test_sft_tools import COMMAND, bash_tool_trial
from tests.support.records import write_trials
from tests.support.task_dirs import MakeTask

try:
    import trl
except ImportError as exc:  # pragma: no cover - the dev extra installs it
    pytest.skip(f"trl does not import ({exc}): pip install -e '.[dev]'",
                allow_module_level=True)


def _tiny_trainer(dataset: Any, out: Path) -> Any:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from tests.support.tiny_tokenizer import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id))
    args = trl.SFTConfig(output_dir=str(out), max_steps=1, per_device_train_batch_size=1,
                         report_to=[], use_cpu=True, save_strategy="no", logging_steps=1,
                         max_length=None, dataloader_num_workers=0)
    return trl.SFTTrainer(model=model, args=args, train_dataset=dataset,
                          processing_class=tokenizer)


def _text(trainer: Any, row: int) -> str:
    return str(trainer.processing_class.decode(trainer.train_dataset[row]["input_ids"]))


def test_sft_rows_straight_into_trl_train_with_the_tool_schemas(
        make_task: MakeTask, tmp_path: Path) -> None:
    from datasets import load_dataset

    tasks = make_task("alpha").parent
    repo = tmp_path / "traj"
    build_trajectories(repo, trials=write_trials(tmp_path / "t.jsonl", [bash_tool_trial(1)]),
                       task_roots=[tasks])
    # The card's config, as a user loads it. A cache of its own: datasets 5.2 keys a local
    # folder's cache by its name and files, so another test's "traj" would be read back.
    sft = load_dataset(str(repo), "sft", split="train", cache_dir=str(tmp_path / "hf-cache"))
    trainer = _tiny_trainer(sft, tmp_path / "out")
    text = _text(trainer, 0)
    system = text.split("</tools>")[0]
    for tool in TOOLS:  # every schema, whole, in the system turn the model is trained on
        assert json.dumps(tool) in system, system
    assert json.dumps({"command": COMMAND}) in text  # the call, as the model wrote it
    result = trainer.train()
    assert result.global_step == 1 and result.training_loss > 0

    # Its twin without the column: the same messages train with no schema in sight.
    bare = _tiny_trainer(sft.remove_columns("tools"), tmp_path / "bare")
    assert "<tools>" not in _text(bare, 0) and '"parameters"' not in _text(bare, 0)
