"""verl 0.9.1's run-time asserts on the rendered run: each rule of
``termgrade.training.checks.RULES`` is broken once and refused (or warned about) by
``preflight``, and verl's own functions run on the rendered config where a CPU can run them:
``rearrange_micro_batches`` (the token budget), ``validate_config`` and the actor config's
``validate`` (batch sizes), the V1 trainer's dataloader arithmetic, the tool-parser registry.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from termgrade.training.checks import RULES, VLLM_MAX_LORA_RANKS, composed_errors, preflight
from termgrade.training.models import VERL_TOOL_PARSERS
from termgrade.training.recipe import (
    GrpoRecipe,
    RunPlaces,
    as_hydra,
    run_overrides,
    smoke_recipe,
)
from termgrade.training.verl_config import compose_verl_config

PLACES = RunPlaces(train_files="/run/data/train.parquet", val_files="/run/data/validation.parquet",
                   agent_loop_config="/run/agent_loop.yaml", checkpoints="/run/checkpoints")


def rendered(recipe: GrpoRecipe) -> Any:
    return compose_verl_config(as_hydra(run_overrides(recipe, PLACES)))


def padded_batch(length: int, batch: int = 2) -> Any:
    """What verl's actor receives: sequences padded to prompt + response length."""
    import torch
    from tensordict import TensorDict

    mask = torch.zeros(batch, length, dtype=torch.int64)
    mask[:, : length // 3] = 1
    return TensorDict({"input_ids": torch.zeros(batch, length, dtype=torch.int64),
                       "attention_mask": mask}, batch_size=[batch])


@pytest.mark.parametrize("recipe", [GrpoRecipe(), smoke_recipe(GrpoRecipe())],
                         ids=["paper", "smoke"])
def test_verls_micro_batching_accepts_the_rendered_token_budgets(verl: Any,
                                                                 recipe: GrpoRecipe) -> None:
    from verl.utils.seqlen_balancing import rearrange_micro_batches

    config = rendered(recipe)
    longest = config.data.max_prompt_length + config.data.max_response_length
    assert longest == recipe.max_prompt_length + recipe.max_response_length
    batch = padded_batch(longest)
    for budget in (config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu,
                   config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu,
                   config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu):
        micro, _ = rearrange_micro_batches(batch, max_token_len=int(budget))
        assert sum(len(m["input_ids"]) for m in micro) == 2
    assert config.actor_rollout_ref.rollout.max_model_len >= longest
    assert composed_errors(config, recipe) == []


def test_verls_default_budget_is_what_crashed_and_preflight_refuses_it(verl: Any) -> None:
    """The issue's crash, with verl's own function: its default 16,384 tokens per GPU under
    a 69,632-token trajectory; preflight names it before anything is written."""
    from verl.utils.seqlen_balancing import rearrange_micro_batches

    with pytest.raises(AssertionError, match="max_token_len must be greater"):
        rearrange_micro_batches(padded_batch(69632), max_token_len=16384)
    checks = preflight(GrpoRecipe(ppo_max_token_len_per_gpu=16384), n_train=16, n_val=1)
    assert any("token-budget-actor" in e for e in checks.errors)
    bad = rendered(GrpoRecipe(log_prob_max_token_len_per_gpu=16384))
    assert any("log_prob_max_token_len_per_gpu=16384" in e
               for e in composed_errors(bad, GrpoRecipe()))


@pytest.mark.parametrize("recipe", [GrpoRecipe(), smoke_recipe(GrpoRecipe())],
                         ids=["paper", "smoke"])
def test_verls_validate_config_and_actor_validation_pass(verl: Any, recipe: GrpoRecipe) -> None:
    """verl's validate_config (main_ppo calls it) on the rendered config. Its last check,
    the vLLM LoRA rank, imports vLLM: run here with the rollout named sglang so that import
    is skipped; the rank itself is checked against verl's table below."""
    from omegaconf import open_dict
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    config = rendered(recipe)
    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    n_gpus = recipe.n_gpus_per_node * recipe.nnodes
    actor.validate(n_gpus, config.data.train_batch_size, config.actor_rollout_ref.model)
    with open_dict(config):
        config.actor_rollout_ref.rollout.name = "sglang"
    validate_config(config, use_reference_policy=False, use_critic=False)


def test_verls_batch_asserts_fire_on_a_broken_batch(verl: Any) -> None:
    """The same verl checks refuse a mini-batch larger than the batch; so does preflight."""
    from verl.utils.config import omega_conf_to_dataclass

    recipe = GrpoRecipe(train_batch_size=8, ppo_mini_batch_size=16)
    config = rendered(recipe)
    from omegaconf import open_dict

    with open_dict(config):
        config.actor_rollout_ref.actor.use_dynamic_bsz = False
    actor = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    with pytest.raises(ValueError, match="must be >="):
        actor.validate(8, 8, config.actor_rollout_ref.model)
    assert any("(mini-batch)" in e for e in preflight(recipe, n_train=16, n_val=1).errors)


def test_lora_ranks_are_verls(verl: Any) -> None:
    """The rank table is the one verl's get_vllm_max_lora_rank falls back to (read from its
    source: importing the module needs vLLM)."""
    source = Path(verl.__file__).parent / "workers" / "rollout" / "vllm_rollout" / "utils.py"
    tree = ast.parse(source.read_text())
    function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                    and n.name == "get_vllm_max_lora_rank")
    literal = next(n for n in ast.walk(function) if isinstance(n, ast.Subscript)
                   and isinstance(n.value, ast.Name) and n.value.id == "Literal")
    ranks = tuple(e.value for e in literal.slice.elts)  # type: ignore[attr-defined]
    assert ranks == VLLM_MAX_LORA_RANKS
    assert any("(lora-rank)" in e for e in preflight(GrpoRecipe(lora_rank=1024), n_train=16,
                                                     n_val=1).errors)


def test_the_parser_table_names_verls_parsers(verl: Any) -> None:
    from verl.experimental.agent_loop.tool_parser import ToolParser

    assert set(VERL_TOOL_PARSERS) == set(ToolParser._registry)


def test_the_v1_trainer_dataloader_arithmetic(verl: Any) -> None:
    """verl's V1 trainer: steps_per_epoch = tasks // train_batch_size (drop_last=True);
    the source says so, and preflight refuses 0 and warns below the steps asked."""
    from verl.trainer.ppo.v1 import trainer_base

    text = inspect.getsource(trainer_base)
    assert "drop_last=True" in text
    assert "len(self.train_dataset) // self.config.data.train_batch_size" in text
    one = preflight(GrpoRecipe(), n_train=1, n_val=1)
    assert any("(train-dataloader)" in e and "termgrade select" in e for e in one.errors)
    short = preflight(GrpoRecipe(), n_train=40, n_val=1)
    assert short.errors == [] and any("ends after 2 of the 5 steps asked (steps-per-epoch)" in w
                                      for w in short.warnings)
    assert preflight(GrpoRecipe(), n_train=80, n_val=1).warnings == []


@pytest.mark.parametrize(("changes", "rule"), [
    ({"ppo_max_token_len_per_gpu": 1000}, "token-budget-actor"),
    ({"log_prob_max_token_len_per_gpu": 1000}, "token-budget-log-prob"),
    ({"max_tokens_per_turn": 70000}, "response-turn"),
    ({"ppo_mini_batch_size": 5}, "mini-batch"),
    ({"rollout_n": 1}, "group-size"),
    ({"temperature": 0.0}, "val-temperature"),
    ({"lora_rank": 0}, "lora-rank"),
    ({"tensor_parallel_size": 3}, "vllm-replicas"),
])
def test_each_rule_refuses_its_break(changes: dict[str, Any], rule: str) -> None:
    checks = preflight(GrpoRecipe(**changes), n_train=80, n_val=1)
    assert any(f"({rule})" in e for e in checks.errors), checks.errors
    assert preflight(GrpoRecipe(), n_train=80, n_val=1).errors == []


def test_no_validation_task_is_refused() -> None:
    assert any("(validation-dataloader)" in e
               for e in preflight(GrpoRecipe(), n_train=16, n_val=0).errors)


def test_every_rule_is_tested_here() -> None:
    text = Path(__file__).read_text()
    for rule in RULES:
        assert f'"{rule.id}"' in text or f"({rule.id})" in text, rule.id


def test_composed_chunked_prefill_rule(verl: Any) -> None:
    from omegaconf import open_dict

    config = rendered(GrpoRecipe())
    assert config.actor_rollout_ref.rollout.enable_chunked_prefill is True
    with open_dict(config):
        config.actor_rollout_ref.rollout.enable_chunked_prefill = False
        config.trainer.v1.sync.parameter_sync_step = 5
        config.actor_rollout_ref.rollout.max_model_len = 32768
    errors = composed_errors(config, GrpoRecipe())
    assert any("(vllm-batched-tokens)" in e for e in errors)
    assert any("(parameter-sync)" in e for e in errors)
    assert any("(vllm-context)" in e for e in errors)

