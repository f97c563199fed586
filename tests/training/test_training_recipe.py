"""The GRPO++ recipe composes with verl 0.9.1's real Hydra config (``ppo_trainer``).

No stub: verl's actor, algorithm and rollout configs convert to its dataclasses on a CPU
torch without vLLM (the rollout config's vLLM version check only runs where vLLM is
installed). The model section is not converted: that reads the weights' config.json.
"""

from __future__ import annotations

from typing import Any

import pytest

from termgrade.core.errors import OptionError
from termgrade.training.recipe import (
    AGENT_NAME,
    GrpoRecipe,
    RunPlaces,
    as_hydra,
    recipe_overrides,
    run_overrides,
)
from termgrade.training.verl_config import compose_verl_config, typed_sections

PLACES = RunPlaces(train_files="/run/data/train.parquet", val_files="/run/data/validation.parquet",
                   agent_loop_config="/run/agent_loop.yaml", checkpoints="/run/checkpoints")


@pytest.fixture(scope="module")
def composed(verl: Any) -> Any:
    return compose_verl_config(as_hydra(run_overrides(GrpoRecipe(), PLACES)))


def test_the_paper_recipe_lands_on_verl_keys(composed: Any) -> None:
    algo, actor = composed.algorithm, composed.actor_rollout_ref.actor
    rollout, model = composed.actor_rollout_ref.rollout, composed.actor_rollout_ref.model
    assert algo.adv_estimator == "grpo" and algo.norm_adv_by_std_in_grpo is False
    assert algo.use_kl_in_reward is False and actor.use_kl_loss is False
    assert (actor.clip_ratio_low, actor.clip_ratio_high) == (0.2, 0.28)
    assert actor.loss_agg_mode == "token-mean" and actor.optim.lr == 1e-5
    assert algo.filter_groups.enable is True and algo.filter_groups.metric == "reward"
    assert algo.filter_groups.max_num_gen_batches == 0  # V1 ignores it: see recipe.py
    assert algo.filter_groups.max_inflight_gen_batches == 2
    assert composed.data.train_batch_size == 16 and actor.ppo_mini_batch_size == 16
    assert rollout.n == 16 and rollout.temperature == 0.6
    assert model.lora_rank == 32 and rollout.load_format == "safetensors"
    assert composed.trainer.total_training_steps == 5
    assert rollout.multi_turn.enable is True
    assert rollout.agent.agent_loop_config_path == "/run/agent_loop.yaml"
    assert rollout.agent.default_agent_loop == AGENT_NAME
    assert composed.data.train_files == "/run/data/train.parquet"
    assert list(composed.trainer.logger) == ["console", "file"]


def test_every_override_changes_or_confirms_a_key_verl_has(verl: Any) -> None:
    """Each key exists in verl's config: struct mode refuses unknown keys without ``+``."""
    for key in recipe_overrides(GrpoRecipe()):
        assert not key.startswith("+"), key
    composed = compose_verl_config(as_hydra(recipe_overrides(GrpoRecipe(lr=3e-6))))
    assert composed.actor_rollout_ref.actor.optim.lr == 3e-6


@pytest.mark.parametrize("bad", [
    "actor_rollout_ref.actor.clip_ratio_hihg=0.28",
    "algorithm.filter_group.enable=True",
    "actor_rollout_ref.rollout.n_rollouts=16",
])
def test_a_misspelled_key_fails(verl: Any, bad: str) -> None:
    with pytest.raises(OptionError, match="rejects the overrides") as caught:
        compose_verl_config([*as_hydra(recipe_overrides(GrpoRecipe())), bad])
    assert bad.split("=")[0].split(".")[-1] in str(caught.value)


def test_sections_convert_to_verl_dataclasses(composed: Any) -> None:
    from verl.trainer.config import AlgoConfig
    from verl.workers.config import FSDPActorConfig, RolloutConfig

    typed = typed_sections(composed)
    actor, algo, rollout = typed["actor"], typed["algorithm"], typed["rollout"]
    assert isinstance(actor, FSDPActorConfig) and isinstance(algo, AlgoConfig)
    assert isinstance(rollout, RolloutConfig)
    assert actor.clip_ratio_high == 0.28 and actor.use_kl_loss is False
    assert algo.filter_groups is not None and algo.filter_groups.enable
    assert rollout.n == 16 and rollout.multi_turn.enable


def test_a_value_verl_refuses_fails_in_its_dataclass(verl: Any) -> None:
    """verl's own validation runs: an unknown loss aggregation mode is refused."""
    composed = compose_verl_config(as_hydra(recipe_overrides(
        GrpoRecipe(loss_agg_mode="token-median"))))
    with pytest.raises(Exception, match=r"token-median|loss_agg_mode"):
        typed_sections(composed)


def test_recipe_refuses_unknown_fields() -> None:
    with pytest.raises(ValueError, match="lora_rnak"):
        GrpoRecipe(lora_rnak=8)  # type: ignore[call-arg]
