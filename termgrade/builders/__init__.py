"""Dataset repo builders: stage a complete repo on disk, ready for ``termgrade publish``.

- :func:`termgrade.builders.environments.build_environments` - tasks, labels, split flags
- :func:`termgrade.builders.trajectories.build_trajectories` - every trial: SFT + episodes
- :func:`termgrade.builders.bandcentral.build_bandcentral` - selected tasks, verl prompts
- :func:`termgrade.training.checkpoint_card.build_checkpoint_card` - a LoRA adapter's card

The repo layout is :class:`termgrade.builders.layout.RepoPaths`; the row models are in
:mod:`termgrade.builders.rows`; ``termgrade validate`` (:mod:`termgrade.validate`)
proves a staged repo. Modules are imported on use (this package imports nothing).
"""
