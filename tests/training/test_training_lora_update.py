"""One GRPO++ update of a tiny causal LM with a peft LoRA adapter (r = 32), on CPU.

The rewards are real: two trajectories of the bash agent loop against real containers
(one solves the task, one does not; :mod:`tests.support.verl_loop`). The model is a
tiny randomly initialised Llama built here with the tiny local tokenizer (no download).
Advantages and the loss are verl's own functions, fed the recipe's values; the test
checks the loss against a hand computation and that only adapter weights move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from termgrade.training.recipe import GrpoRecipe, as_hydra, recipe_overrides
from termgrade.training.verl_config import compose_verl_config, typed_sections
from tests.support.scripted_policy import FINISH, ScriptedPolicy, bash_call
from tests.support.tiny_tokenizer import tiny_tokenizer
from tests.support.verl_loop import RECIPE, run_loop

if TYPE_CHECKING:  # torch is imported where it runs: collecting this module costs no torch import
    import torch


@pytest.fixture(scope="module")
def rollouts(verl: Any, tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    from tests.support.task_dirs import write_task

    config = compose_verl_config(as_hydra(recipe_overrides(RECIPE)))
    root = tmp_path_factory.mktemp("lora-tasks")
    outs = []
    for name, command in (("tg13-lora-pass", "echo hello > /app/out.txt"),
                          ("tg13-lora-fail", "echo bye > /app/out.txt")):
        policy = ScriptedPolicy(tiny_tokenizer(), [bash_call(command), FINISH])
        outs.append(run_loop(config, policy, write_task(root, name)))
    return outs


def _tiny_lora_model() -> Any:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tiny_tokenizer()), hidden_size=64,
                         intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=4, max_position_embeddings=4096)
    recipe = GrpoRecipe()
    lora = LoraConfig(r=recipe.lora_rank, lora_alpha=recipe.lora_alpha,
                      target_modules="all-linear", lora_dropout=0.0)
    return get_peft_model(LlamaForCausalLM(config), lora)


def _batch(outs: list[Any]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """input ids, response mask (aligned to the response slots) and the prompt length."""
    import torch
    prompt = outs[0].prompt_ids
    assert all(o.prompt_ids == prompt for o in outs)  # one prompt, a group of rollouts
    width = max(len(o.response_ids) for o in outs)
    ids = torch.zeros(len(outs), len(prompt) + width, dtype=torch.long)
    mask = torch.zeros(len(outs), width)
    attention = torch.zeros_like(ids)
    for row, out in enumerate(outs):
        n = len(out.response_ids)
        ids[row, : len(prompt) + n] = torch.tensor(prompt + out.response_ids)
        attention[row, : len(prompt) + n] = 1
        mask[row, :n] = torch.tensor(out.response_mask, dtype=torch.float32)
    return ids, attention, mask, len(prompt)


def _log_probs(model: Any, ids: torch.Tensor, attention: torch.Tensor, start: int) -> torch.Tensor:
    import torch
    logits = model(input_ids=ids, attention_mask=attention).logits
    chosen = torch.log_softmax(logits[:, start - 1:-1].float(), dim=-1)
    return chosen.gather(-1, ids[:, start:].unsqueeze(-1)).squeeze(-1)


@pytest.mark.docker
@pytest.mark.slow
def test_one_grpo_update_moves_only_the_adapter(rollouts: list[Any], verl: Any) -> None:
    import torch
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage, get_policy_loss_fn

    rewards = [o.reward_score for o in rollouts]
    assert rewards == [1.0, 0.0]  # from the grader, through the agent loop
    recipe = GrpoRecipe()
    actor = typed_sections(compose_verl_config(as_hydra(recipe_overrides(recipe))))["actor"]
    model = _tiny_lora_model()
    ids, attention, mask, start = _batch(rollouts)
    token_rewards = torch.zeros_like(mask)
    for row, out in enumerate(rollouts):
        token_rewards[row, len(out.response_ids) - 1] = out.reward_score
    advantages, _ = compute_grpo_outcome_advantage(
        token_rewards, mask, np.array(["task"] * len(rollouts)),
        norm_adv_by_std_in_grpo=recipe.norm_adv_by_std_in_grpo)

    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                  lr=recipe.lr)
    log_prob = _log_probs(model, ids, attention, start)
    old = log_prob.detach()  # fully on-policy: the rollout policy is the current one
    loss, _ = get_policy_loss_fn("vanilla")(
        old_log_prob=old, log_prob=log_prob, advantages=advantages, response_mask=mask,
        loss_agg_mode=actor.loss_agg_mode, config=actor)

    # by hand: ratio 1, so every kept token contributes -A; token-mean over model tokens
    n_pass, n_fail = (float(mask[i].sum()) for i in (0, 1))
    assert torch.isclose(loss, torch.tensor(-(0.5 * n_pass - 0.5 * n_fail) / (n_pass + n_fail)))
    assert n_pass + n_fail < float((attention[:, start:]).sum())  # tool tokens left out

    loss.backward()
    optimizer.step()
    changed = {k for k, v in model.named_parameters() if not torch.equal(v, before[k])}
    assert changed and all("lora_" in k for k in changed)
    assert any("lora_B" in k for k in changed)
    trainable = {k for k, v in model.named_parameters() if v.requires_grad}
    assert trainable and all("lora_" in k for k in trainable)
    with torch.no_grad():  # the step lowered the loss it was taken on
        after, _ = get_policy_loss_fn("vanilla")(
            old_log_prob=old, log_prob=_log_probs(model, ids, attention, start),
            advantages=advantages, response_mask=mask, loss_agg_mode=actor.loss_agg_mode,
            config=actor)
    assert after < loss
