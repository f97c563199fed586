"""Tasks -> verl's RL dataset format (the ``verl`` config of the bandcentral repo).

verl's RLHFDataset reads parquet rows with ``data_source`` (routes the reward function),
``prompt`` (chat messages the chat template renders), ``ability``, ``reward_model``
(``style`` and ``ground_truth``) and ``extra_info`` (``split``, ``index`` and anything the
reward or tools need). Multi-turn tool use reads ``extra_info.need_tools_kwargs`` /
``tools_kwargs`` (kwargs of each tool's ``create``), and ``agent_name`` picks the agent
loop. Here the reward is the task's own verifier: ``ground_truth`` is the task id, and
the bash tool builds its sandbox from the task archive named in ``tools_kwargs``.
"""

from __future__ import annotations

from termgrade.agent.scaffold import ScaffoldConfig, system_prompt
from termgrade.builders.rows import (
    BashTool,
    CreateKwargs,
    ExtraInfo,
    PromptMessage,
    RewardModel,
    TaskRow,
    ToolsKwargs,
    VerlPromptRow,
)

DATA_SOURCE = "termgrade"
ABILITY = "terminal"
AGENT_NAME = "tool_agent"
REWARD_STYLE = "rule"

BASH_SYSTEM_PROMPT = system_prompt("/app", ScaffoldConfig())
"""System prompt of the bash tool-calling scaffold the recipe trains in: the one
:mod:`termgrade.agent.scaffold` defines and ``termgrade grade`` grades with."""


def verl_prompt_row(task: TaskRow, *, split: str, index: int,
                    base_pass_rate: float | None,
                    system_prompt: str = BASH_SYSTEM_PROMPT) -> VerlPromptRow:
    """One verl prompt row for ``task``; ``split`` is ``train`` or ``validation``."""
    return VerlPromptRow(
        data_source=DATA_SOURCE,
        prompt=[PromptMessage(role="system", content=system_prompt),
                PromptMessage(role="user", content=task.instruction)],
        ability=ABILITY,
        reward_model=RewardModel(style=REWARD_STYLE, ground_truth=task.task_id),
        extra_info=ExtraInfo(
            split=split,
            index=index,
            task_id=task.task_id,
            base_pass_rate=base_pass_rate,
            domain=task.domain,
            difficulty=task.difficulty,
            need_tools_kwargs=True,
            tools_kwargs=ToolsKwargs(bash=BashTool(create_kwargs=CreateKwargs(
                task_id=task.task_id, archive_sha256=task.archive_sha256))),
        ),
        agent_name=AGENT_NAME,
    )
