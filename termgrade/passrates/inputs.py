"""What a report is made from: label files, trial files, or both (sniffed per file)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from termgrade.labels import DEFAULT_SCHEME, BandScheme, compute_labels, read_labels, sniff_kind
from termgrade.labels.compute import KSpec
from termgrade.records.run import read_runs
from termgrade.trialsets import DataIssue, read_trials


@dataclass
class PassRateInputs:
    labels: pd.DataFrame
    """Label rows (see :data:`termgrade.labels.LABEL_COLUMNS`)."""
    trials: pd.DataFrame | None
    """The trial frame when trial files were given; cost, near-miss and turn sections need it."""
    files: list[Path] = field(default_factory=list)
    issues: list[DataIssue] = field(default_factory=list)
    scheme: BandScheme = DEFAULT_SCHEME


def load_inputs(paths: Sequence[Path], *, scheme: BandScheme = DEFAULT_SCHEME,
                k: KSpec = None) -> PassRateInputs:
    """Labels come from label files if any were given, else from the trials."""
    kinds = {Path(p): sniff_kind(Path(p)) for p in paths}
    label_files = [p for p, kind in kinds.items() if kind == "labels"]
    trial_files = [p for p, kind in kinds.items() if kind == "trials"]
    issues: list[DataIssue] = []
    trials = None
    if trial_files:
        trial_set = read_trials(trial_files)
        trials = trial_set.frame
        issues += trial_set.issues
    if label_files:
        labels = read_labels(label_files)
    else:
        label_set = compute_labels(trials if trials is not None else pd.DataFrame(), k=k,
                                   scheme=scheme, runs=read_runs(trial_files))
        labels = label_set.frame
        issues += label_set.issues
    return PassRateInputs(labels=labels, trials=trials, files=list(kinds), issues=issues,
                        scheme=scheme)
