"""What verl 0.9.1 would assert at run time, checked by ``train prepare`` before it writes.

Each :class:`VerlRule` names the place in verl 0.9.1 that fails (an ``assert``, a raise, a
divide by zero, a dataloader that yields nothing) and the condition on the run that keeps
it quiet; :func:`preflight` evaluates them on a recipe and the split sizes. A broken rule
is an :class:`~termgrade.core.errors.OptionError` naming the option to change; a rule that only
cuts the run short is a warning. ``tests/training/test_training_checks.py`` runs verl's own
functions on the rendered config for each rule it can run on a CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from termgrade.core.errors import OptionError
from termgrade.training.recipe import GrpoRecipe

VLLM_MAX_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""vLLM's ``MaxLoRARanks`` (verl's ``get_vllm_max_lora_rank`` rounds the rank up to one)."""


@dataclass(frozen=True)
class VerlRule:
    id: str
    where: str
    """The file and function of verl 0.9.1 (or vLLM through it) that fails."""
    condition: str
    fatal: bool = True


RULES: tuple[VerlRule, ...] = (
    VerlRule("token-budget-actor", "verl/utils/seqlen_balancing.py rearrange_micro_batches "
             "(actor update, use_dynamic_bsz)",
             "actor.ppo_max_token_len_per_gpu x ulysses_sequence_parallel_size >= "
             "max_prompt_length + max_response_length"),
    VerlRule("token-budget-log-prob", "verl/utils/seqlen_balancing.py rearrange_micro_batches "
             "(old and ref log-prob, log_prob_use_dynamic_bsz)",
             "rollout.log_prob_max_token_len_per_gpu and ref.log_prob_max_token_len_per_gpu "
             ">= max_prompt_length + max_response_length"),
    VerlRule("vllm-context", "verl/workers/rollout/vllm_rollout/vllm_async_server.py generate "
             "(max_model_len - prompt must leave room)",
             "rollout.max_model_len >= max_prompt_length + max_response_length"),
    VerlRule("vllm-batched-tokens", "vllm_async_server._validate_configs",
             "enable_chunked_prefill, or max_num_batched_tokens >= max_model_len"),
    VerlRule("train-dataloader", "verl/trainer/ppo/v1/trainer_base.py (drop_last=True; "
             "steps_per_epoch = tasks // train_batch_size, a divide by zero at 0) and "
             "ray_trainer.py 'Train dataloader is empty!'",
             "train tasks >= data.train_batch_size"),
    VerlRule("validation-dataloader", "ray_trainer.py 'Validation dataloader is empty!'",
             "validation tasks >= 1"),
    VerlRule("steps-per-epoch", "trainer_base.py fit loop: current_epoch < total_epochs",
             "(train tasks // train_batch_size) x total_epochs >= total_training_steps",
             fatal=False),
    VerlRule("mini-batch", "verl/workers/config/actor.py ActorConfig.validate and the "
             "trainer's mini-batch split",
             "ppo_mini_batch_size <= train_batch_size and divides it"),
    VerlRule("parameter-sync", "trainer_base.py step", "train_batch_size % parameter_sync_step "
             "== 0 (1 in sync mode)"),
    VerlRule("group-size", "verl's replay buffer (filter_groups evicts zero-std groups of more "
             "than one rollout); GRPO's advantage is 0 for a group of one",
             "rollout.n >= 2"),
    VerlRule("val-temperature", "verl/utils/config.py validate_config",
             "val_kwargs.do_sample needs rollout.temperature > 0"),
    VerlRule("lora-rank", "verl/utils/config.py validate_config -> get_vllm_max_lora_rank",
             "0 < lora_rank <= 512 (vLLM's MaxLoRARanks)"),
    VerlRule("vllm-replicas", "verl/workers/rollout/llm_server.py (num_replicas = world_size "
             "// rollout world size) and replica.py",
             "tensor_parallel_size divides n_gpus_per_node x nnodes"),
    VerlRule("response-turn", "the agent loop's per-turn cap",
             "max_tokens_per_turn <= max_response_length"),
)


@dataclass
class Preflight:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def raise_errors(self) -> None:
        if self.errors:
            first, *rest = self.errors
            more = "".join(f"\n  also: {e}" for e in rest)
            raise OptionError(first + more, fix="change the option named (see `termgrade "
                              "train prepare --help`); nothing was written")


def token_budget(recipe: GrpoRecipe) -> int:
    """The longest sequence of a trajectory: its prompt and all of its response."""
    return recipe.max_prompt_length + recipe.max_response_length


def preflight(recipe: GrpoRecipe, *, n_train: int, n_val: int) -> Preflight:
    """Every rule of :data:`RULES` on ``recipe`` and the split sizes."""
    out = Preflight()
    need = token_budget(recipe)
    actor = recipe.ppo_max_token_len_per_gpu or need
    if actor < need:
        out.errors.append(f"ppo_max_token_len_per_gpu {actor} < prompt + response {need}: "
                          "verl's rearrange_micro_batches asserts max_token_len >= "
                          "max_seq_len after the first rollout batch (token-budget-actor)")
    log_prob = recipe.log_prob_max_token_len_per_gpu or need
    if log_prob < need:
        out.errors.append(f"log_prob_max_token_len_per_gpu {log_prob} < prompt + response "
                          f"{need} (token-budget-log-prob)")
    if recipe.max_tokens_per_turn > recipe.max_response_length:
        out.errors.append(f"max_tokens_per_turn {recipe.max_tokens_per_turn} > "
                          f"max_response_length {recipe.max_response_length} (response-turn)")
    batch = recipe.train_batch_size
    if n_train < batch:
        out.errors.append(
            f"{n_train} training task(s) for train_batch_size {batch}: verl's dataloader "
            "drops the last partial batch, so it is empty and the run stops before its first "
            f"step (train-dataloader); select at least {batch} training tasks "
            f"(`termgrade select --n {max(batch, 16)}`)"
            + (f" or ask a batch they fill (`--batch-size {n_train}`)" if n_train else ""))
    if n_val < 1:
        out.errors.append("no validation task: verl stops with 'Validation dataloader is "
                          "empty!' (validation-dataloader); select a validation split")
    steps_per_epoch = n_train // batch if batch else 0
    if steps_per_epoch > 0 and steps_per_epoch * recipe.total_epochs < recipe.total_training_steps:
        out.warnings.append(
            f"{n_train} training tasks make {steps_per_epoch} step(s) of {batch} per epoch: "
            f"with {recipe.total_epochs} epoch(s) the run ends after "
            f"{steps_per_epoch * recipe.total_epochs} of the {recipe.total_training_steps} "
            f"steps asked (steps-per-epoch); select at least "
            f"{recipe.total_training_steps * batch} tasks, or ask fewer --steps")
    mini = recipe.ppo_mini_batch_size
    if mini > batch or batch % mini:
        out.errors.append(f"ppo_mini_batch_size {mini} must divide train_batch_size {batch} "
                          "(mini-batch)")
    if recipe.rollout_n < 2:
        out.errors.append(f"rollout_n {recipe.rollout_n}: a group of one rollout has advantage "
                          "0 and dynamic sampling evicts every group (group-size); use >= 2")
    if recipe.val_n >= 1 and recipe.temperature <= 0:
        out.errors.append("validation samples with do_sample=True need temperature > 0 "
                          "(val-temperature)")
    if not 0 < recipe.lora_rank <= VLLM_MAX_LORA_RANKS[-1]:
        out.errors.append(f"lora_rank {recipe.lora_rank}: vLLM serves ranks 1..."
                          f"{VLLM_MAX_LORA_RANKS[-1]} (lora-rank)")
    gpus = recipe.n_gpus_per_node * recipe.nnodes
    tp = recipe.tensor_parallel_size
    if tp < 1 or tp > gpus or gpus % tp:
        out.errors.append(f"tensor_parallel_size {tp} must divide the {gpus} GPU(s) "
                          "(vllm-replicas)")
    return out


def composed_errors(config: object, recipe: GrpoRecipe) -> list[str]:
    """The token and batch rules on verl's composed config (after Hydra's interpolations),
    where a value another key supplies would escape :func:`preflight`."""
    from omegaconf import OmegaConf

    def get(key: str) -> Any:
        return OmegaConf.select(config, key)  # type: ignore[arg-type]

    need = token_budget(recipe)
    errors = []
    actor_sp = int(get("actor_rollout_ref.actor.ulysses_sequence_parallel_size") or 1)
    budgets = {
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu": actor_sp,
        "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu": 1,
        "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu": 1,
    }
    for key, sp in budgets.items():
        value = int(get(key))
        if value * sp < need:
            errors.append(f"{key}={value} < prompt + response {need} (rearrange_micro_batches)")
    max_model_len = get("actor_rollout_ref.rollout.max_model_len")
    if max_model_len is not None and int(max_model_len) < need:
        errors.append(f"rollout.max_model_len={max_model_len} < {need} (vllm-context)")
    chunked = get("actor_rollout_ref.rollout.enable_chunked_prefill")
    batched = int(get("actor_rollout_ref.rollout.max_num_batched_tokens"))
    if not chunked and batched < need:
        errors.append(f"max_num_batched_tokens={batched} < {need} without chunked prefill "
                      "(vllm-batched-tokens)")
    mode = str(get("trainer.v1.trainer_mode") or "sync")
    sync = get(f"trainer.v1.{mode}.parameter_sync_step") or 1
    if int(get("data.train_batch_size")) % int(sync):
        errors.append(f"train_batch_size not divisible by parameter_sync_step {sync} "
                      "(parameter-sync)")
    return errors
