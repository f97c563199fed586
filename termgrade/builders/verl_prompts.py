"""The verl prompt row of a task: one builder for the bandcentral repo's ``verl`` config
and the run ``termgrade train prepare`` writes, so the repo's rows are the trainer's rows.

verl's RLHFDataset reads parquet rows with ``data_source`` (routes the reward function),
``prompt`` (chat messages the chat template renders), ``ability``, ``reward_model``
(``style`` and ``ground_truth``) and ``extra_info``; ``agent_name`` picks the agent loop:
``termgrade_bash`` (:data:`AGENT_NAME`), TermGrade's bash agent
loop, whose tools are the grading scaffold's (:data:`termgrade.agent.scaffold.TOOLS`)
and whose reward is the task's own verifier run by the grader. ``extra_info.task_dir`` is
``tasks/<task_id>``, relative to the repo (which ships the task tree there) and to the run
directory (where ``train prepare`` unpacks each task from its archive).
"""

from __future__ import annotations

from termgrade.agent.scaffold import ScaffoldConfig, system_prompt
from termgrade.builders.rows import ExtraInfo, PromptMessage, RewardModel, VerlPromptRow
from termgrade.task.model import image_tag_for

DATA_SOURCE = "termgrade"
ABILITY = "terminal"
REWARD_STYLE = "rule"

BASH_SYSTEM_PROMPT = system_prompt("/app", ScaffoldConfig())
"""System prompt of the bash tool-calling scaffold the recipe trains in: the one
:mod:`termgrade.agent.scaffold` defines and ``termgrade grade`` grades with."""

AGENT_NAME = "termgrade_bash"
"""The ``agent_name`` of every prompt row, registered by the agent-loop config file."""


def task_dir_for(task_id: str) -> str:
    """Where a row's task lives, relative to the repo and to the run directory."""
    return f"tasks/{task_id}"


def verl_prompt_row(*, task_id: str, instruction: str, archive_sha256: str, split: str,
                    index: int, base_pass_rate: float | None, domain: str | None = None,
                    difficulty: str | None = None,
                    system_prompt: str = BASH_SYSTEM_PROMPT) -> VerlPromptRow:
    """One verl prompt row; ``split`` is ``train`` or ``validation``. The user message is
    the instruction as the grading scaffold sends it (stripped)."""
    task_dir = task_dir_for(task_id)
    return VerlPromptRow(
        data_source=DATA_SOURCE,
        prompt=[PromptMessage(role="system", content=system_prompt),
                PromptMessage(role="user", content=instruction.strip())],
        ability=ABILITY,
        reward_model=RewardModel(style=REWARD_STYLE, ground_truth=task_id),
        extra_info=ExtraInfo(
            split=split, index=index, task_id=task_id, task_dir=task_dir,
            tests_dir=f"{task_dir}/tests", image=image_tag_for(task_id),
            archive_sha256=archive_sha256, base_pass_rate=base_pass_rate, domain=domain,
            difficulty=difficulty),
        agent_name=AGENT_NAME,
    )
