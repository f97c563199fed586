"""The two GRPO++ rules TermGrade states on its own, in the form verl applies them.

* :func:`informative_groups`: dynamic sampling keeps a prompt only when its rollouts'
  rewards differ (verl 0.9.1's replay buffer evicts a group whose metric has zero
  standard deviation, with more than one rollout). A dropped group has Dr.GRPO advantage
  zero on every token: dropping it loses no gradient, it frees the batch slot.
* :func:`gen_batches`: the V1 analogue of DAPO's ``num_gen_batches``: prompts generated
  for one step over ``train_batch_size`` (SPEC section 8: near the paper's cap of 10, the
  tasks have drifted out of band and should be regraded).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from statistics import pstdev


def informative_groups(rewards: Sequence[float], groups: Sequence[Hashable]) -> set[Hashable]:
    """The groups (prompt uids) whose rewards are not all equal."""
    if len(rewards) != len(groups):
        raise ValueError(f"{len(rewards)} rewards for {len(groups)} group labels")
    by_group: dict[Hashable, list[float]] = {}
    for reward, group in zip(rewards, groups, strict=True):
        by_group.setdefault(group, []).append(float(reward))
    return {g for g, values in by_group.items() if len(values) > 1 and pstdev(values) > 0}


def gen_batches(*, train_batch_size: int, evicted: float, discarded_surplus: float) -> float:
    """Generation batches one step needed: (kept + evicted + surplus prompts) / batch.

    verl logs ``training/filter_groups/evicted_samples`` (all-equal groups it dropped and
    refilled) and ``.../discarded_surplus_samples`` (informative groups generated beyond
    the batch); the step kept ``train_batch_size``. 1.0 means no group was dropped."""
    if train_batch_size <= 0:
        raise ValueError("train_batch_size must be positive")
    return (train_batch_size + evicted + discarded_surplus) / train_batch_size
