"""Training inputs: verl-ready prompt tables and the recipe's defaults."""

from termgrade.training.prompts import BASH_SYSTEM_PROMPT, verl_prompt_row

__all__ = ["BASH_SYSTEM_PROMPT", "verl_prompt_row"]
