"""Compose overrides with verl's own Hydra config (``ppo_trainer``), as ``main_ppo`` does.

A misspelled or removed key fails here, on a laptop, instead of hours later on the GPU
node. verl is imported lazily (the ``train`` extra); nothing here needs a GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from termgrade.core.errors import OptionError

CONFIG_NAME = "ppo_trainer"
TRAIN_EXTRA = ("pip install 'termgrade[train]' && pip install --no-deps 'verl==0.9.1' "
               "(verl's config files need none of its dependencies; its full install "
               "conflicts with TermGrade's huggingface_hub pin)")


def find_verl_config_dir() -> Path | None:
    """verl's Hydra config directory, found without importing verl (whose import needs
    torch and its other dependencies); None when verl is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        config = Path(location) / "trainer" / "config"
        if (config / f"{CONFIG_NAME}.yaml").is_file():
            return config
    return None


def verl_config_dir() -> Path:
    found = find_verl_config_dir()
    if found is None:
        raise OptionError("verl is not installed here: its ppo_trainer config is not found",
                          fix=TRAIN_EXTRA)
    return found


def compose_verl_config(overrides: Sequence[str]) -> Any:
    """verl's ``ppo_trainer`` config with ``overrides`` applied (an omegaconf DictConfig).

    Raises :class:`OptionError` naming the override verl rejected."""
    config_dir = verl_config_dir()
    try:
        from hydra import compose, initialize_config_dir
        from hydra.errors import HydraException
        from omegaconf.errors import OmegaConfBaseException
    except ImportError as exc:
        raise OptionError(f"hydra-core is not installed ({exc}): verl's config cannot be "
                          "composed", fix=TRAIN_EXTRA) from exc

    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base=None):
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
