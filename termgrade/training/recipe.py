"""The GRPO++ recipe as data: one typed config, rendered to verl 0.9.1 Hydra overrides.

SPEC section 8: GRPO with the DAPO changes and Dr.GRPO advantages, no KL anywhere,
Clip-Higher 0.2 / 0.28, token-mean loss, dynamic sampling (``filter_groups``), fully
on-policy (16 prompts x 16 rollouts, mini-batch 16, one update per step), temperature
0.6, LoRA rank 32, learning rate 1e-5, 5 updates. Every field says where its value comes
from; :func:`recipe_overrides` is the only place that knows verl's key names, and a test
composes them with verl's own ``ppo_trainer`` config (a misspelled key fails there).

Dynamic sampling under verl 0.9.1: the paper's trainer regenerated up to
``max_num_gen_batches`` = 10 batches per step. verl 0.9.1's default V1 trainer logs and
ignores that key: its replay buffer evicts an all-equal group and dispatches two fresh
prompts in its place, at most ``max_inflight_gen_batches`` x ``train_batch_size`` prompts
in flight, with no cap on the total. The mapping chosen here: ``max_num_gen_batches`` is
rendered as 0 (verl: "no upper limit", which is what V1 does anyway, without the
warning), ``max_inflight_gen_batches`` = 2 (the paper's observed 2 generation batches per
step), and the cap of 10 moves to the monitor (:mod:`termgrade.training.monitor`), which
computes the V1 analogue of ``num_gen_batches`` from verl's logged eviction counts and
warns at the cap: the signal to regrade and reselect the tasks.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from termgrade.agent.episode import ScaffoldConfig
from termgrade.agent.scaffolds import TrainingLoop, trainable_scaffolds, training_scaffold
from termgrade.builders.verl_prompts import AGENT_NAME as AGENT_NAME  # the rows' loop
from termgrade.core.errors import OptionError

_SCAFFOLD = ScaffoldConfig()


class GrpoRecipe(BaseModel):
    """GRPO++ (SPEC section 8). Defaults are the paper's run; ``source`` of each field says
    whether the paper states it or it is this project's choice."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # -- the objective ---------------------------------------------------------------
    adv_estimator: str = Field("grpo", description="paper: GRPO group-relative advantages.")
    norm_adv_by_std_in_grpo: bool = Field(
        False, description="paper: Dr.GRPO, subtract the group mean, no division by the std.")
    use_kl_in_reward: bool = Field(False, description="paper: no KL term in the reward.")
    use_kl_loss: bool = Field(False, description="paper: no KL term in the loss.")
    entropy_coeff: float = Field(0.0, description="choice: no entropy bonus (none stated).")
    clip_ratio_low: float = Field(0.2, description="paper: Clip-Higher, low 0.2.")
    clip_ratio_high: float = Field(0.28, description="paper: Clip-Higher, high 0.28.")
    loss_agg_mode: str = Field("token-mean", description="paper: token-level averaging.")
    # -- dynamic sampling ----------------------------------------------------------------
    filter_groups: bool = Field(True, description="paper: drop all-pass / all-fail groups.")
    filter_metric: str = Field(
        "reward", description="choice: verl's canonical reward (the agent loop's reward_score, "
                              "the binary verifier reward).")
    max_num_gen_batches: int = Field(
        10, description="paper: at most 10 generation batches per step. verl 0.9.1 V1 ignores "
                        "the key: rendered as 0, enforced as the monitor's regrade warning.")
    max_inflight_gen_batches: int = Field(
        2, description="choice: V1's bound on generation in flight, the paper's observed 2.")
    # -- batch shape, fully on-policy -------------------------------------------------------
    train_batch_size: int = Field(16, description="paper: 16 prompts per step.")
    ppo_mini_batch_size: int = Field(16, description="paper: mini-batch 16, one update/step.")
    ppo_epochs: int = Field(1, description="paper: one optimizer update per step.")
    rollout_n: int = Field(16, description="paper: 16 rollouts per prompt.")
    temperature: float = Field(0.6, description="paper: sampling temperature 0.6.")
    total_training_steps: int = Field(5, description="paper: 5 updates (about one epoch).")
    total_epochs: int = Field(1, description="paper: about one epoch.")
    # -- the model -----------------------------------------------------------------------------
    base_model: str = Field("google/gemma-4-31B-it", description="paper: gemma-4-31B-it.")
    lora_rank: int = Field(32, description="paper: LoRA rank 32.")
    lora_alpha: int = Field(32, description="choice: alpha = rank (not stated).")
    lr: float = Field(1e-5, description="paper: learning rate 1e-5.")
    # -- lengths and the agent -------------------------------------------------------------
    max_prompt_length: int = Field(4096, description="choice: system prompt + instruction.")
    max_response_length: int = Field(
        65536, description="choice: all turns of one trajectory, tool output included.")
    max_turns: int = Field(_SCAFFOLD.max_turns, description="scaffold: turns per episode.")
    max_tokens_per_turn: int = Field(
        8192, description="choice: the per-turn completion cap the agent loop enforces "
                          "(verl's sampling params carry none).")
    tool_format: str = Field(
        "gemma4", description="model: verl's tool-call parser for the base model's family "
                              "(termgrade.training.models), or --tool-parser.")
    ppo_max_token_len_per_gpu: int | None = Field(
        None, description="derived: tokens per actor micro-batch with dynamic batch size; "
                          "None = prompt + response (verl asserts >= the longest sequence).")
    log_prob_max_token_len_per_gpu: int | None = Field(
        None, description="derived: the same for the old and ref log-prob passes; "
                          "None = prompt + response.")
    max_num_batched_tokens: int = Field(
        8192, description="choice: vLLM's tokens per scheduler step (chunked prefill on).")
    max_concurrent_trajectories: int = Field(
        64, description="choice: trajectories holding containers at once, per agent worker.")
    # -- the node ------------------------------------------------------------------------------
    n_gpus_per_node: int = Field(8, description="paper: one node of 8 x H200.")
    nnodes: int = Field(1, description="paper: one node.")
    tensor_parallel_size: int = Field(4, description="choice: vLLM TP for a 31B bf16 model.")
    gpu_memory_utilization: float = Field(0.6, description="choice: vLLM KV cache share.")
    test_freq: int = Field(1, description="paper: validation every step.")
    val_n: int = Field(1, description="choice: one validation rollout per task.")
    val_max_samples: int = Field(-1, description="paper: every validation task (-1).")


SMOKE = {
    "total_training_steps": 1, "train_batch_size": 2, "ppo_mini_batch_size": 2,
    "rollout_n": 4, "n_gpus_per_node": 1, "nnodes": 1, "tensor_parallel_size": 1,
    "max_response_length": 16384, "max_tokens_per_turn": 4096,
    "max_concurrent_trajectories": 8, "gpu_memory_utilization": 0.5, "val_max_samples": 2,
}
"""``train prepare --smoke``: one update of 2 prompts x 4 rollouts on one GPU, 2
validation tasks, 16k-token trajectories: the whole loop (vLLM with LoRA, the agent loop
against containers, rewards, one update, the weight sync) in minutes, not the recipe."""


def smoke_recipe(recipe: GrpoRecipe) -> GrpoRecipe:
    return recipe.model_copy(update=SMOKE)


class RunPlaces(BaseModel):
    """Where a run's inputs live on the training node (the run directory's files)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    train_files: str
    val_files: str
    agent_loop_config: str
    checkpoints: str
    project_name: str = "termgrade"
    experiment_name: str = "grpo-pp"


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    return str(value)


def training_loop(scaffold: str | None = None) -> TrainingLoop:
    """The verl agent loop of the scaffold a run trains in (``scaffold``, else the default
    one): the scaffold door says which scaffolds can be trained and by which loop."""
    trained = training_scaffold(scaffold)
    if trained is None or trained.training is None:
        trainable = ", ".join(trainable_scaffolds())
        raise OptionError(f"scaffold {scaffold}: no training loop (trainable: {trainable})",
                          fix=f"train in one of {trainable}")
    return trained.training


def recipe_overrides(recipe: GrpoRecipe, scaffold: str | None = None) -> dict[str, object]:
    """The recipe as verl 0.9.1 config keys -> values (independent of where files live);
    the agent loop is ``scaffold``'s (:func:`training_loop`)."""
    actor = "actor_rollout_ref.actor"
    rollout = "actor_rollout_ref.rollout"
    model = "actor_rollout_ref.model"
    budget = recipe.max_prompt_length + recipe.max_response_length
    log_prob = recipe.log_prob_max_token_len_per_gpu or budget
    return {
        "algorithm.adv_estimator": recipe.adv_estimator,
        "algorithm.norm_adv_by_std_in_grpo": recipe.norm_adv_by_std_in_grpo,
        "algorithm.use_kl_in_reward": recipe.use_kl_in_reward,
        "algorithm.filter_groups.enable": recipe.filter_groups,
        "algorithm.filter_groups.metric": recipe.filter_metric,
        "algorithm.filter_groups.max_num_gen_batches": 0,
        "algorithm.filter_groups.max_inflight_gen_batches": recipe.max_inflight_gen_batches,
        "data.train_batch_size": recipe.train_batch_size,
        "data.max_prompt_length": recipe.max_prompt_length,
        "data.max_response_length": recipe.max_response_length,
        "data.return_raw_chat": True,
        "data.val_max_samples": recipe.val_max_samples,
        f"{actor}.use_kl_loss": recipe.use_kl_loss,
        f"{actor}.entropy_coeff": recipe.entropy_coeff,
        f"{actor}.clip_ratio_low": recipe.clip_ratio_low,
        f"{actor}.clip_ratio_high": recipe.clip_ratio_high,
        f"{actor}.loss_agg_mode": recipe.loss_agg_mode,
        f"{actor}.ppo_mini_batch_size": recipe.ppo_mini_batch_size,
        f"{actor}.ppo_micro_batch_size_per_gpu": 1,
        f"{actor}.ppo_epochs": recipe.ppo_epochs,
        f"{actor}.optim.lr": recipe.lr,
        f"{actor}.use_dynamic_bsz": True,
        f"{actor}.ppo_max_token_len_per_gpu": recipe.ppo_max_token_len_per_gpu or budget,
        "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu": log_prob,
        f"{rollout}.log_prob_max_token_len_per_gpu": log_prob,
        f"{rollout}.max_model_len": budget,
        f"{rollout}.max_num_batched_tokens": recipe.max_num_batched_tokens,
        f"{rollout}.enable_chunked_prefill": True,
        f"{model}.path": recipe.base_model,
        f"{model}.lora_rank": recipe.lora_rank,
        f"{model}.lora_alpha": recipe.lora_alpha,
        f"{model}.target_modules": "all-linear",
        f"{model}.enable_gradient_checkpointing": True,
        f"{rollout}.name": "vllm",
        f"{rollout}.mode": "async",
        f"{rollout}.n": recipe.rollout_n,
        f"{rollout}.temperature": recipe.temperature,
        f"{rollout}.load_format": "safetensors",
        f"{rollout}.tensor_model_parallel_size": recipe.tensor_parallel_size,
        f"{rollout}.gpu_memory_utilization": recipe.gpu_memory_utilization,
        f"{rollout}.multi_turn.enable": True,
        f"{rollout}.multi_turn.max_assistant_turns": recipe.max_turns,
        f"{rollout}.multi_turn.max_user_turns": recipe.max_turns,
        f"{rollout}.multi_turn.format": recipe.tool_format,
        f"{rollout}.agent.default_agent_loop": training_loop(scaffold).name,
        f"{rollout}.val_kwargs.temperature": recipe.temperature,
        f"{rollout}.val_kwargs.do_sample": True,
        f"{rollout}.val_kwargs.n": recipe.val_n,
        "trainer.total_training_steps": recipe.total_training_steps,
        "trainer.total_epochs": recipe.total_epochs,
        "trainer.n_gpus_per_node": recipe.n_gpus_per_node,
        "trainer.nnodes": recipe.nnodes,
        "trainer.test_freq": recipe.test_freq,
        "trainer.val_before_train": True,
        "trainer.save_freq": recipe.total_training_steps,
        "trainer.logger": ["console", "file"],
    }


def run_overrides(recipe: GrpoRecipe, places: RunPlaces,
                  scaffold: str | None = None) -> dict[str, object]:
    """The recipe plus the run's files: everything the launch script passes to verl
    (``scaffold``: the one the run trains in, the default one unless named)."""
    return {
        **recipe_overrides(recipe, scaffold),
        "data.train_files": places.train_files,
        "data.val_files": places.val_files,
        "actor_rollout_ref.rollout.agent.agent_loop_config_path": places.agent_loop_config,
        "trainer.project_name": places.project_name,
        "trainer.experiment_name": places.experiment_name,
        "trainer.default_local_dir": places.checkpoints,
    }


def as_hydra(overrides: dict[str, object]) -> list[str]:
    """``key=value`` strings, the form Hydra's command line and compose API take."""
    return [f"{key}={_value(value)}" for key, value in overrides.items()]
