"""Compose overrides with verl's own Hydra config (``ppo_trainer``), as ``main_ppo`` does.

A misspelled or removed key fails here, on a laptop, instead of hours later on the GPU
node. verl is imported lazily (the ``train`` extra); nothing here needs a GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from termgrade.errors import OptionError

CONFIG_NAME = "ppo_trainer"
TRAIN_EXTRA = "pip install 'termgrade[train]' (or scripts/ensure_train_cpu.sh for CPU tests)"


def verl_config_dir() -> Path:
    try:
        import verl
    except ImportError as exc:
        raise OptionError(f"verl is not installed ({exc})", fix=TRAIN_EXTRA) from exc
    return Path(verl.__file__).parent / "trainer" / "config"


def compose_verl_config(overrides: Sequence[str]) -> Any:
    """verl's ``ppo_trainer`` config with ``overrides`` applied (an omegaconf DictConfig).

    Raises :class:`OptionError` naming the override verl rejected."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=str(verl_config_dir()), version_base=None):
            return compose(config_name=CONFIG_NAME, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        raise OptionError(f"verl's {CONFIG_NAME} config rejects the overrides: {exc}",
                          fix="check the key against verl 0.9.1's config "
                              "(verl/trainer/config/_generated_ppo_trainer.yaml)") from exc


def typed_sections(config: Any) -> dict[str, Any]:
    """The recipe's sections as verl's own dataclasses (its validation runs on each):
    the actor (``FSDPActorConfig``), the algorithm (``AlgoConfig``) and the rollout
    (``RolloutConfig``). The model section is left out: building it reads the model's
    config.json, i.e. the weights' repo."""
    from verl.utils.config import omega_conf_to_dataclass

    return {
        "actor": omega_conf_to_dataclass(config.actor_rollout_ref.actor),
        "algorithm": omega_conf_to_dataclass(config.algorithm),
        "rollout": omega_conf_to_dataclass(config.actor_rollout_ref.rollout),
    }
