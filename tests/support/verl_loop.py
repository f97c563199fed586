"""Run the bash agent loop the way verl's agent-loop worker does, for the training tests.

:func:`run_loop` instantiates the loop from the agent-loop config ``train prepare`` writes
(``hydra.utils.instantiate``, as ``AgentLoopWorker`` does) and awaits one ``run`` on a task
directory, with a scripted token policy standing in for vLLM. verl is imported inside the
function: take the session's ``verl`` fixture first, so the import is paid once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from termgrade.training.data import prompt_row
from termgrade.training.prepare import agent_loop_config
from termgrade.training.recipe import GrpoRecipe
from tests.support.scripted_policy import ScriptedPolicy

RECIPE = GrpoRecipe(max_prompt_length=2048, max_response_length=3072, max_tokens_per_turn=256,
                    tool_format="hermes", max_concurrent_trajectories=4)
"""The recipe the agent-loop tests run (small budgets, hermes tool calls)."""


def run_loop(config: Any, policy: ScriptedPolicy, task_dir: Path, *,
             recipe: GrpoRecipe = RECIPE, include_unattested: bool = False) -> Any:
    """One trajectory of the loop on ``task_dir`` under verl config ``config``: verl's
    ``AgentLoopOutput`` (the task's containers are real: needs Docker).
    ``include_unattested``: as ``train prepare --include-unattested`` writes the config."""
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset

    entry = OmegaConf.create(
        agent_loop_config(recipe, include_unattested=include_unattested)[0])
    row = prompt_row({"task_id": task_dir.name, "instruction": "Write hello to /app/out.txt.",
                      "archive_sha256": "0" * 64, "base_pass_rate": 0.5},
                     split="train", index=0)
    row["extra_info"]["task_dir"] = str(task_dir)  # absolute: taken as it is

    async def go() -> Any:
        loop = hydra.utils.instantiate(
            config=entry, trainer_config=DictConfigWrap(config), server_manager=policy,
            tokenizer=policy.tokenizer, processor=None, hf_model_type=None,
            dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data),
            tools=ToolListWrap([]))
        return await loop.run({"temperature": 0.6, "top_p": 1.0},
                              raw_prompt=row["prompt"], extra_info=row["extra_info"])

    return asyncio.run(go())
