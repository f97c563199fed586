"""Training: the GRPO++ run with verl on the bandcentral repo (docs/training.md).

``recipe`` (the typed recipe, verl overrides), ``verl_config`` (composition with verl's
Hydra config), ``data`` (prompt rows), ``agent_loop`` (the bash agent loop for verl; it
imports verl), ``prepare`` / ``launch`` / ``monitor`` / ``evaluate`` (the commands'
libraries), ``grpo`` (group filter, re-band signal), ``card`` (the checkpoint card's
run section), ``prompts`` (the bandcentral repo's verl config).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termgrade.builders.verl_prompts import BASH_SYSTEM_PROMPT, verl_prompt_row
from termgrade.core.lazy import lazy_exports

_API: dict[str, str] = {"MonitorReport": "termgrade.training.monitor"}

__all__ = ["BASH_SYSTEM_PROMPT", "MonitorReport", "verl_prompt_row"]

__getattr__ = lazy_exports(__name__, _API)

if TYPE_CHECKING:
    from termgrade.training.monitor import MonitorReport
