"""Pass rates and what explains them, as ``termgrade report`` writes them.

pass@k, paired tests, Jaccard, cost, near-misses, turns and figures.
"""

from termgrade.passrates.build import PassRateOptions, build_report, write_report
from termgrade.passrates.inputs import PassRateInputs, load_inputs
from termgrade.passrates.models import PassRateReport

__all__ = [
           "PassRateInputs",
           "PassRateOptions",
           "PassRateReport",
           "build_report",
           "load_inputs",
           "write_report",
]
