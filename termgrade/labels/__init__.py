"""Pass-rate labels and difficulty bands of task x model x scaffold."""

from termgrade.labels.compute import (
    LABEL_COLUMNS,
    LabelSet,
    compute_labels,
    parse_k,
    require_counted,
)
from termgrade.labels.io import read_labels, sniff_kind, write_labels
from termgrade.stats.bands import DEFAULT_SCHEME, BandScheme

__all__ = ["DEFAULT_SCHEME", "LABEL_COLUMNS", "BandScheme", "LabelSet",
           "compute_labels", "parse_k", "read_labels", "require_counted", "sniff_kind",
           "write_labels"]
