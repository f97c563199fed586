"""The recipe's choices agree with verl's own ``core_algos`` on toy tensors.

Each test feeds the recipe's values (from the config verl composes, converted to its
``FSDPActorConfig``) to verl's functions: the numbers below are verl's, not ours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from termgrade.training.grpo import gen_batches, informative_groups
from termgrade.training.recipe import GrpoRecipe, as_hydra, recipe_overrides
from termgrade.training.verl_config import compose_verl_config, typed_sections

if TYPE_CHECKING:  # torch is imported where it runs: collecting this module costs no torch import
    import torch

RECIPE = GrpoRecipe()


@pytest.fixture(scope="module")
def actor(verl: Any) -> Any:
    return typed_sections(compose_verl_config(as_hydra(recipe_overrides(RECIPE))))["actor"]


def _advantages(rewards: list[float], index: list[str], length: int = 3) -> torch.Tensor:
    import torch
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn

    mask = torch.ones(len(rewards), length)
    token_rewards = torch.zeros(len(rewards), length)
    token_rewards[:, -1] = torch.tensor(rewards)
    advantages, _ = get_adv_estimator_fn(RECIPE.adv_estimator)(
        token_level_rewards=token_rewards, response_mask=mask, index=np.array(index),
        norm_adv_by_std_in_grpo=RECIPE.norm_adv_by_std_in_grpo)
    return advantages


def test_dr_grpo_advantages_subtract_the_group_mean_only(verl: Any) -> None:
    import torch
    advantages = _advantages([1, 0, 1, 0], ["a"] * 4)
    assert torch.allclose(advantages[:, 0], torch.tensor([0.5, -0.5, 0.5, -0.5]))
    assert torch.allclose(advantages, advantages[:, :1].expand_as(advantages))  # every token
    # with the std division (plain GRPO) the same rewards give about +-0.866: not the recipe
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    scaled, _ = compute_grpo_outcome_advantage(
        torch.tensor([[1.0], [0.0], [1.0], [0.0]]), torch.ones(4, 1), np.array(["a"] * 4),
        norm_adv_by_std_in_grpo=True)
    assert abs(float(scaled[0, 0]) - 0.5 / np.std([1, 0, 1, 0], ddof=1)) < 1e-4


def test_all_equal_groups_are_dropped_and_carry_no_gradient(verl: Any) -> None:
    import torch
    rewards = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0]
    index = ["pass"] * 4 + ["fail"] * 4 + ["mixed"] * 4
    assert informative_groups(rewards, index) == {"mixed"}
    advantages = _advantages(rewards, index)
    assert torch.count_nonzero(advantages[:8]) == 0  # verl: zero advantage, no signal
    assert torch.allclose(advantages[8:, 0], torch.tensor([0.75, -0.25, -0.25, -0.25]))
    assert informative_groups([1.0], ["alone"]) == set()  # one rollout: nothing to compare


def _pg_loss(actor: Any, log_prob: torch.Tensor, old: torch.Tensor, adv: torch.Tensor,
             mask: torch.Tensor, batch_tokens: int | None = None) -> torch.Tensor:
    from verl.trainer.ppo.core_algos import get_policy_loss_fn

    actor.global_batch_info.clear()
    if batch_tokens is not None:
        actor.global_batch_info.update(dp_size=1, batch_num_tokens=batch_tokens,
                                       global_batch_size=None, loss_scale_factor=None)
    loss, _ = get_policy_loss_fn("vanilla")(
        old_log_prob=old, log_prob=log_prob, advantages=adv, response_mask=mask,
        loss_agg_mode=actor.loss_agg_mode, config=actor)
    return loss


def test_token_mean_over_micro_batches_equals_the_full_batch_mean(actor: Any) -> None:
    import torch
    generator = torch.Generator().manual_seed(0)
    log_prob = torch.randn(4, 6, generator=generator)
    old = log_prob + 0.05 * torch.randn(4, 6, generator=generator)
    adv = torch.tensor([[0.5], [-0.5], [0.75], [-0.25]]).expand(4, 6)
    mask = torch.tensor([[1] * 6, [1, 1, 0, 0, 0, 0], [1] * 3 + [0] * 3, [1] * 5 + [0]],
                        dtype=torch.float32)  # trajectories of 6, 2, 3 and 5 tokens
    assert actor.loss_agg_mode == "token-mean"
    full = _pg_loss(actor, log_prob, old, adv, mask)
    tokens = int(mask.sum())
    micro = sum(_pg_loss(actor, log_prob[i:i + 2], old[i:i + 2], adv[i:i + 2], mask[i:i + 2],
                         batch_tokens=tokens) for i in (0, 2))
    assert torch.allclose(full, micro)
    # a long trajectory weighs by its tokens: the per-sequence mean would differ here
    per_sequence = torch.stack([_pg_loss(actor, log_prob[i:i + 1], old[i:i + 1], adv[i:i + 1],
                                         mask[i:i + 1]) for i in range(4)]).mean()
    assert not torch.allclose(full, per_sequence)


def test_clip_higher_is_asymmetric(actor: Any) -> None:
    import torch
    assert (actor.clip_ratio_low, actor.clip_ratio_high) == (0.2, 0.28)
    mask = torch.ones(1, 1)
    old = torch.zeros(1, 1)
    big = torch.log(torch.tensor([[2.0]]))    # ratio 2: clipped at 1 + 0.28 for A > 0
    small = torch.log(torch.tensor([[0.5]]))  # ratio 0.5: clipped at 1 - 0.2 for A < 0
    up = _pg_loss(actor, big, old, torch.ones(1, 1), mask)
    down = _pg_loss(actor, small, old, -torch.ones(1, 1), mask)
    assert torch.isclose(up, torch.tensor(-1.28))
    assert torch.isclose(down, torch.tensor(0.8))
    assert not torch.isclose(up.abs() - 1, 1 - down.abs())  # 0.28 up, 0.2 down


def test_gen_batches_is_the_v1_analogue_of_num_gen_batches() -> None:
    assert gen_batches(train_batch_size=16, evicted=0, discarded_surplus=0) == 1.0
    assert gen_batches(train_batch_size=16, evicted=12, discarded_surplus=4) == 2.0
    with pytest.raises(ValueError):
        gen_batches(train_batch_size=0, evicted=0, discarded_surplus=0)
