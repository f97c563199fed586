"""Dataset repo builders: stage a complete repo on disk, ready for ``termgrade publish``.

Each dataset repo kind (environments, trajectories, bandcentral) is one record in
:mod:`termgrade.builders.kinds`, the only list of them: its builder, rows, card, checks and
default repo id (``build_repo(kind, out, ...)`` stages any).
- :func:`termgrade.training.checkpoint_card.build_checkpoint_card` - a LoRA adapter's card

The repo layout is :class:`termgrade.builders.layout.RepoPaths`; the row models are in
:mod:`termgrade.builders.rows`; ``termgrade validate`` (:mod:`termgrade.validate`)
proves a staged repo. Names are imported on first use (this package imports only the
registry of kinds, which is plain strings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termgrade.builders.kinds import api_names
from termgrade.core.lazy import lazy_exports

_API: dict[str, str] = {
    "RecordSource": "termgrade.builders.inputs",
    "RepoKind": "termgrade.builders.kinds",
    "build_repo": "termgrade.builders.kinds",
    "register_repo_kind": "termgrade.builders.kinds",
    "repo_kinds": "termgrade.builders.kinds",
    **api_names(),  # each kind's builder and summary: the registry is the list
}

__all__ = sorted(_API)

__getattr__ = lazy_exports(__name__, _API)

if TYPE_CHECKING:  # aliased: re-exported (``__all__`` is the registry's, built at run time)
    from termgrade.builders.bandcentral import BandcentralSummary as BandcentralSummary
    from termgrade.builders.bandcentral import build_bandcentral as build_bandcentral
    from termgrade.builders.environments import EnvironmentsSummary as EnvironmentsSummary
    from termgrade.builders.environments import build_environments as build_environments
    from termgrade.builders.inputs import RecordSource as RecordSource
    from termgrade.builders.kinds import RepoKind as RepoKind
    from termgrade.builders.kinds import build_repo as build_repo
    from termgrade.builders.kinds import register_repo_kind as register_repo_kind
    from termgrade.builders.kinds import repo_kinds as repo_kinds
    from termgrade.builders.trajectories import TrajectoriesSummary as TrajectoriesSummary
    from termgrade.builders.trajectories import build_trajectories as build_trajectories
