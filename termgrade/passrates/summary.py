"""Label-level sections of the report: pass@k per configuration, paired tests, Jaccard."""

from __future__ import annotations

import itertools
from dataclasses import asdict

import pandas as pd

from termgrade.passrates.models import ConfigSummary, JaccardOut, PairedRow, PassAtKOut
from termgrade.stats import jaccard_matrix, mean_pass_at_k, paired_compare


def config_names(labels: pd.DataFrame) -> pd.Series:
    """Display name per row: the model, or ``model [scaffold]`` when scaffolds differ."""
    if labels["scaffold"].nunique() <= 1:
        return labels["model"].astype(str)
    return labels["model"].astype(str) + " [" + labels["scaffold"].astype(str) + "]"


def with_config(labels: pd.DataFrame) -> pd.DataFrame:
    out = labels.copy()
    out["config"] = config_names(labels)
    return out


def _pass_at(n: pd.Series, c: pd.Series, k: int) -> PassAtKOut:
    return PassAtKOut(**asdict(mean_pass_at_k(n.to_numpy(), c.to_numpy(), k)))


ATTESTATION_KINDS = ("attested", "unattested", "unrecorded")


def _by_attestation(rows: pd.DataFrame) -> dict[str, PassAtKOut]:
    """pass@1 per attestation kind present (a label row's ``attested``: true, false, null)."""
    if "attested" not in rows:
        return {}
    attested = rows["attested"]
    masks = (attested.eq(True), attested.eq(False), attested.isna())
    return {kind: _pass_at(rows.loc[mask, "n_counted"], rows.loc[mask, "n_passed"], 1)
            for kind, mask in zip(ATTESTATION_KINDS, masks, strict=True) if mask.any()}


def summarize_configs(labels: pd.DataFrame) -> list[ConfigSummary]:
    """One summary per configuration, ordered by pass@1 (ascending), then name."""
    out = []
    for config, rows in with_config(labels).groupby("config", sort=True):
        k = int(rows["k"].max())
        n, c = rows["n_counted"], rows["n_passed"]
        out.append(ConfigSummary(
            config=str(config), model=str(rows["model"].iloc[0]),
            scaffold=str(rows["scaffold"].iloc[0]), k=k, n_tasks=len(rows),
            n_measured=int((n > 0).sum()), n_counted_trials=int(n.sum()),
            pass_at_1=_pass_at(n, c, 1), pass_at_k=_pass_at(n, c, max(k, 1)),
            pass_at_8=_pass_at(n, c, 8) if k >= 8 else None,
            bands={str(b): int(v) for b, v in rows["band"].value_counts().sort_index().items()},
            pass_at_1_by_attestation=_by_attestation(rows)))
    return sorted(out, key=lambda s: (s.pass_at_1.value is None, s.pass_at_1.value or 0.0,
                                      s.config))


def wide_pass_rates(labels: pd.DataFrame) -> pd.DataFrame:
    """task_id x config table of pass rates (NaN where unmeasured or missing)."""
    frame = with_config(labels)
    return frame.pivot_table(index="task_id", columns="config", values="pass_rate",
                             aggfunc="first", dropna=False)


def paired_comparisons(labels: pd.DataFrame, order: list[str], *, n_boot: int = 2000,
                       seed: int = 0) -> list[PairedRow]:
    """Every two configurations over the tasks both measured (task-level pairing)."""
    wide = wide_pass_rates(labels)
    rows = []
    for a, b in itertools.combinations(order, 2):
        both = wide[[a, b]].dropna()
        if both.empty:
            continue
        result = paired_compare(both[a].to_numpy(), both[b].to_numpy(), n_boot=n_boot,
                                seed=seed)
        rows.append(PairedRow(a=a, b=b, **asdict(result)))
    return rows


def band_sets(labels: pd.DataFrame, band: str) -> dict[str, set[str]]:
    frame = with_config(labels)
    return {str(config): set(rows.loc[rows["band"] == band, "task_id"])
            for config, rows in frame.groupby("config", sort=True)}


def jaccard_section(labels: pd.DataFrame, band: str, order: list[str]) -> JaccardOut:
    sets = band_sets(labels, band)
    result = jaccard_matrix({name: sets[name] for name in order if name in sets})
    return JaccardOut(band=band, names=result.names, matrix=result.matrix, sizes=result.sizes,
                      in_all=result.in_all, off_diagonal_min=result.off_diagonal_min,
                      off_diagonal_max=result.off_diagonal_max,
                      max_pair=list(result.max_pair) if result.max_pair else None)
