"""Statistics of the release: pass@k, paired comparisons, GRPO weights, set overlap."""

from termgrade.stats.grpo import (
    all_equal_probability,
    expected_all_equal_share,
    grpo_weight,
    reward_variance,
)
from termgrade.stats.jaccard import JaccardMatrix, jaccard, jaccard_matrix
from termgrade.stats.paired import PairedComparison, bootstrap_mean_ci, paired_compare
from termgrade.stats.passk import PassAtK, mean_pass_at_k, pass_at_k

__all__ = [
    "JaccardMatrix",
    "PairedComparison",
    "PassAtK",
    "all_equal_probability",
    "bootstrap_mean_ci",
    "expected_all_equal_share",
    "grpo_weight",
    "jaccard",
    "jaccard_matrix",
    "mean_pass_at_k",
    "paired_compare",
    "pass_at_k",
    "reward_variance",
]
