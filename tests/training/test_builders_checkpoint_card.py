"""`termgrade build checkpoint-card`: the LoRA adapter's model card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard

from termgrade.builders.card import split_front_matter
from termgrade.core.errors import RecordError
from termgrade.training.checkpoint_card import (
    ADAPTER_FILES,
    DEFAULT_TRAIN_CONFIG,
    build_checkpoint_card,
)


def test_default_recipe_and_results_table(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"results": [
        {"benchmark": "terminal-bench-2.1", "scaffold": "terminus-2", "base": 43.0,
         "trained": 46.1, "n_evaluations": 7}]}))
    out = build_checkpoint_card(tmp_path / "model", results=results)
    text = (out / "README.md").read_text()
    meta, body = split_front_matter(text)
    assert meta["base_model"] == "google/gemma-4-31B-it"
    assert meta["library_name"] == "peft"
    assert meta["datasets"] == ["ai-and/termgrade-bandcentral-gemma4-31b-bash"]
    assert "| terminal-bench-2.1 | pass@1 | terminus-2 | 43.0000 | 46.1000 | +3.10 | 7 |" in body
    assert "| `clip_ratio_high` | 0.28 |" in body
    assert "| `adapter.rank` | 32 |" in body
    assert yaml.safe_load((out / "training_config.yaml").read_text()) == DEFAULT_TRAIN_CONFIG
    assert ModelCard.load(out / "README.md").data.base_model == "google/gemma-4-31B-it"


def test_custom_config_and_no_results(tmp_path: Path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text("base_model: my/base\ndataset: me/tasks\nadapter: {rank: 8}\n")
    out = build_checkpoint_card(tmp_path / "model", config=config)
    body = (out / "README.md").read_text()
    assert "rank 8" in body and "_Not evaluated yet._" in body
    assert "my/base" in body


def test_bad_results_name_the_field(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"benchmark": "tb", "trained": "high"}]))
    with pytest.raises(RecordError, match=r"results.json \[0.trained\]"):
        build_checkpoint_card(tmp_path / "model", results=results)
    assert not (tmp_path / "model").exists()


def test_the_card_says_whether_an_adapter_is_there(tmp_path: Path) -> None:
    recipe = build_checkpoint_card(tmp_path / "recipe")
    card = (recipe / "README.md").read_text()
    assert "This repo holds no adapter yet" in card and "to be trained with GRPO" in card
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text('{"r": 32, "peft_type": "LORA"}')
    with pytest.raises(RecordError, match=r"adapter_model\.safetensors"):
        build_checkpoint_card(tmp_path / "half", adapter=adapter)
    (adapter / "adapter_model.safetensors").write_bytes(b"\0" * 16)
    trained = build_checkpoint_card(tmp_path / "trained", adapter=adapter)
    card = (trained / "README.md").read_text()
    assert "holds no adapter" not in card and ", trained with GRPO" in card
    assert all((trained / name).read_bytes() == (adapter / name).read_bytes()
               for name in ADAPTER_FILES)
