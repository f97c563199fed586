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

The row model (:class:`VerlPromptRow`), its one builder (:func:`verl_prompt_row`) and the
agent loop's name (:data:`AGENT_NAME`) live here and nowhere else; ``termgrade build
bandcentral`` and ``termgrade train prepare`` both write the rows with the model's Arrow
schema (:func:`termgrade.builders.rows.schema_for`).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from termgrade.agent.scaffold import VERL_AGENT_LOOP, ScaffoldConfig, system_prompt
from termgrade.builders.rows import RowModel
from termgrade.records.arrow import LargeStr
from termgrade.task.model import image_tag_for

DATA_SOURCE = "termgrade"
ABILITY = "terminal"
REWARD_STYLE = "rule"

BASH_SYSTEM_PROMPT = system_prompt("/app", ScaffoldConfig())
"""System prompt of the bash tool-calling scaffold the recipe trains in: the one
:mod:`termgrade.agent.scaffold` defines and ``termgrade grade`` grades with."""

AGENT_NAME = VERL_AGENT_LOOP
"""The ``agent_name`` of every prompt row, registered by the agent-loop config file: the
bash scaffold's training loop, as the scaffold door has it (``bash-tool``'s ``training``)."""


class PromptMessage(RowModel):
    role: str = Field(description="system or user.")
    content: LargeStr = Field(description="Message text.")


class RewardModel(RowModel):
    style: str = Field(description="verl reward style: 'rule' (a programmatic verifier).")
    ground_truth: str = Field(description="The task_id whose verifier scores the rollout.")


class ExtraInfo(RowModel):
    split: str = Field(description="train or validation.")
    index: int = Field(ge=0, description="Row index within the split.")
    task_id: str = Field(description="The task's id.")
    task_dir: str = Field(description="The task's directory, relative to the repo (and to a "
                          "`termgrade train prepare` run, which unpacks it there): "
                          "tasks/<task_id>.")
    tests_dir: str = Field(description="Its tests: task_dir/tests.")
    image: str = Field(description="The image tag the grader builds the task as.")
    archive_sha256: str = Field(description="sha256 of the task's archive (config tasks).")
    base_pass_rate: float | None = Field(description="Measured base pass rate.")
    domain: str | None = Field(description="Task domain.")
    difficulty: str | None = Field(description="Authored difficulty.")


class VerlPromptRow(RowModel):
    """One prompt of verl's RL dataset (``data.train_files`` / ``data.val_files``)."""

    row_schema: ClassVar[str | None] = "verl_prompt_row"

    data_source: str = Field(description="Dataset name; verl routes reward functions by it.")
    prompt: list[PromptMessage] = Field(description="Chat messages fed to the chat template.")
    ability: str = Field(description="Task family: 'terminal'.")
    reward_model: RewardModel = Field(description="How the reward is computed.")
    extra_info: ExtraInfo = Field(description="Split, index, task id and selection data.")
    agent_name: str = Field(description=f"verl agent loop to run the prompt with: {AGENT_NAME}, "
                            "TermGrade's bash agent loop (its tools and reward: the task's "
                            "own verifier).")


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
