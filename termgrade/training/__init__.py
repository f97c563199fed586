"""Training: the GRPO++ run with verl on the bandcentral repo (docs/training.md).

``recipe`` (the typed recipe, verl overrides), ``verl_config`` (composition with verl's
Hydra config), ``data`` (prompt rows), ``agent_loop`` (the bash agent loop for verl; it
imports verl), ``prepare`` / ``launch`` / ``monitor`` / ``evaluate`` (the commands'
libraries), ``grpo`` (group filter, re-band signal), ``card`` (the checkpoint card's
run section), ``prompts`` (the bandcentral repo's verl config).
"""

from termgrade.builders.verl_prompts import BASH_SYSTEM_PROMPT, verl_prompt_row

__all__ = ["BASH_SYSTEM_PROMPT", "verl_prompt_row"]
