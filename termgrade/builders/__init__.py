"""Dataset repo builders: stage a complete repo on disk, ready for ``termgrade publish``.

- :func:`termgrade.builders.environments.build_environments` - tasks, labels, split flags
- :func:`termgrade.builders.trajectories.build_trajectories` - every trial: SFT + episodes
- :func:`termgrade.builders.bandcentral.build_bandcentral` - selected tasks, verl prompts
- :func:`termgrade.training.checkpoint_card.build_checkpoint_card` - a LoRA adapter's card

The repo layout is :class:`termgrade.builders.layout.RepoPaths`; the row models are in
:mod:`termgrade.builders.rows`; ``termgrade validate`` (:mod:`termgrade.validate`)
proves a staged repo. Names are imported on first use (this package imports nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termgrade.core.lazy import lazy_exports

_API: dict[str, str] = {
    "BandcentralSummary": "termgrade.builders.bandcentral",
    "build_bandcentral": "termgrade.builders.bandcentral",
    "EnvironmentsSummary": "termgrade.builders.environments",
    "build_environments": "termgrade.builders.environments",
    "TrajectoriesSummary": "termgrade.builders.trajectories",
    "build_trajectories": "termgrade.builders.trajectories",
    "RecordSource": "termgrade.builders.inputs",
}

__all__ = ["BandcentralSummary", "EnvironmentsSummary", "RecordSource", "TrajectoriesSummary",
           "build_bandcentral", "build_environments", "build_trajectories"]

__getattr__ = lazy_exports(__name__, _API)

if TYPE_CHECKING:
    from termgrade.builders.bandcentral import BandcentralSummary, build_bandcentral
    from termgrade.builders.environments import EnvironmentsSummary, build_environments
    from termgrade.builders.inputs import RecordSource
    from termgrade.builders.trajectories import TrajectoriesSummary, build_trajectories
