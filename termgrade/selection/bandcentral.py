"""The band-central rule: train on the tasks whose measured base pass rate is nearest 0.5.

From the pool (the labels of one model x scaffold, plus any external task sets graded the
same way), training takes the ``n`` tasks with ``lo <= p <= hi`` nearest ``target``; no
hand curation. Validation takes, from what is left, ``val_n`` tasks nearest each of
``val_targets`` (default 60 near 0.25 and 60 near 0.75: deliberately bimodal, disjoint from
training). Ties in distance are broken by the sha256 of the task id (or by the id), so the
choice is deterministic and does not favour any prefix of names. Every other pool task is
``unseen``.

Unattested tasks (label ``attested`` false: graded by ``test.sh``'s own reward, which the
grader cannot attest) are left out of the pool unless ``include_unattested``; an issue of
kind ``unattested`` names them either way.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from termgrade.core.errors import OptionError
from termgrade.trialsets.issues import DataIssue, IssueLog, preview

CORPUS = "corpus"
_EPS = 1e-12
SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$", re.ASCII)
"""A split name ``datasets`` accepts (its ``_split_re``): letters, digits and ``_``,
dots between words. It is also a Python name in the card's quick start."""


def check_split_name(name: str, where: str) -> None:
    """Refuse a split name ``datasets`` cannot load (``rl-train``), naming the fix."""
    if not SPLIT_NAME.match(name):
        suggestion = re.sub(r"\W+", "_", name, flags=re.ASCII).strip("_") or "train"
        raise OptionError(f"{where}: split name {name!r} is not one `datasets` can load "
                          "(letters, digits and _ only, dots between words)",
                          fix=f"use {suggestion!r} instead")


@dataclass(frozen=True)
class SelectionConfig:
    model: str
    scaffold: str | None = None
    n: int = 151
    lo: float = 0.25
    hi: float = 0.75
    target: float = 0.5
    val_n: int = 60
    """Validation tasks per validation target."""
    val_targets: tuple[float, ...] = (0.25, 0.75)
    val_max_distance: float = 0.2
    """A validation task's pass rate is within this of its target (the default keeps
    tasks at p = 0 and p = 1, which carry no signal, out of validation near 0.25/0.75)."""
    tiebreak: str = "hash"
    """``hash`` (sha256 of the task id) or ``id`` (the id itself)."""
    rollouts: int = 16
    """Group size G for the expected share of all-equal groups."""
    split_names: tuple[str, str, str] | None = None
    """(unseen, train, validation); default ("unseen", f"train{n}", f"heldout{val total}")."""
    include_unattested: bool = False
    """Keep unattested tasks in the pool (left out by default, with an issue)."""

    def __post_init__(self) -> None:
        if not 0 <= self.lo <= self.hi <= 1:
            raise OptionError(f"--range {self.lo} {self.hi}: need 0 <= lo <= hi <= 1")
        if self.n < 0 or self.val_n < 0 or self.rollouts < 1:
            raise OptionError("--n and --val-n must be >= 0, --rollouts >= 1")
        if self.tiebreak not in ("hash", "id"):
            raise OptionError(f"--tiebreak {self.tiebreak!r}: use 'hash' or 'id'")
        if self.split_names is not None and len(set(self.split_names)) != 3:
            raise OptionError(f"split names {self.split_names} must be three distinct names")
        for target in self.val_targets:
            if not 0 <= target <= 1:
                raise OptionError(f"--val-targets {','.join(f'{t:g}' for t in self.val_targets)}"
                                  f": {target:g} is not a pass rate in [0, 1]",
                                  fix="e.g. --val-targets 0.25,0.75")
        if not 0 <= self.val_max_distance <= 1:
            raise OptionError(f"--val-max-distance {self.val_max_distance:g}: need a distance "
                              "in [0, 1]", fix="e.g. --val-max-distance 0.2")
        for name in self.names:
            check_split_name(name, "--split-names")

    @property
    def names(self) -> tuple[str, str, str]:
        if self.split_names is not None:
            return self.split_names
        return ("unseen", f"train{self.n}", f"heldout{self.val_n * len(self.val_targets)}")


@dataclass
class Selection:
    config: SelectionConfig
    pool: pd.DataFrame
    """task_id, pass_rate, n_counted, k, source, split, role (train/validation/None),
    val_target (the target it was chosen for), rank (order of choice within its role)."""
    n_in_range: int
    issues: list[DataIssue] = field(default_factory=list)

    def chosen(self, role: str) -> pd.DataFrame:
        rows = self.pool[self.pool["role"] == role]
        return rows.sort_values("rank")


def _one_config(labels: pd.DataFrame, config: SelectionConfig, where: str) -> pd.DataFrame:
    models = sorted(labels["model"].unique())
    rows = labels[labels["model"] == config.model]
    if rows.empty:
        raise OptionError(f"{where}: no labels for model {config.model!r}",
                          fix=f"pick one of: {preview(models, 10)}")
    scaffolds = sorted(rows["scaffold"].unique())
    if config.scaffold is not None:
        rows = rows[rows["scaffold"] == config.scaffold]
        if rows.empty:
            raise OptionError(f"{where}: model {config.model!r} has no labels under scaffold "
                              f"{config.scaffold!r}", fix=f"pick one of: {', '.join(scaffolds)}")
    elif len(scaffolds) > 1:
        raise OptionError(f"{where}: model {config.model!r} was graded under several scaffolds",
                          fix=f"pass --scaffold, one of: {', '.join(scaffolds)}")
    columns = ["task_id", "pass_rate", "n_counted", "k"]
    return rows[columns + (["attested"] if "attested" in rows else [])]


def build_pool(labels: pd.DataFrame, config: SelectionConfig,
               external: Sequence[tuple[str, pd.DataFrame]] = ()) -> pd.DataFrame:
    """The corpus labels of the model, plus each external set's, with a ``source`` column."""
    parts = [_one_config(labels, config, "labels").assign(source=CORPUS)]
    for name, frame in external:
        parts.append(_one_config(frame, config, f"external set {name!r}").assign(source=name))
    pool = pd.concat(parts, ignore_index=True)
    dup = pool["task_id"].duplicated(keep=False)
    if dup.any():
        raise OptionError(f"{int(dup.sum())} pool rows share a task id across task sets: "
                          f"{preview(sorted(set(pool.loc[dup, 'task_id'])))}",
                          fix="give external tasks distinct ids, or drop the duplicate set")
    return pool


def _order(pool: pd.DataFrame, target: float, tiebreak: str) -> pd.DataFrame:
    key = pool["task_id"].astype(str)
    if tiebreak == "hash":
        key = key.map(lambda t: hashlib.sha256(t.encode()).hexdigest())
    ordered = pool.assign(_distance=(pool["pass_rate"] - target).abs().round(12), _tie=key,
                          _id=pool["task_id"].astype(str))
    return ordered.sort_values(["_distance", "_tie", "_id"], kind="mergesort")


def _drop_unattested(pool: pd.DataFrame, include: bool, log: IssueLog) -> pd.DataFrame:
    if "attested" not in pool:
        return pool
    unattested = pool["attested"].eq(False)
    ids = sorted(str(t) for t in pool.loc[unattested, "task_id"])
    if not ids:
        return pool.drop(columns="attested")
    if include:
        log.add("unattested", len(ids),
                f"including {len(ids)} unattested task(s) ({preview(ids)}): their pass rates "
                "rest on test.sh's own rewards, which the grader cannot attest")
        return pool.drop(columns="attested")
    log.add("unattested", len(ids),
            f"left out {len(ids)} unattested task(s) ({preview(ids)}): graded by test.sh's "
            "own reward, which the grader cannot attest; pass --include-unattested to "
            "select from them")
    return pool[~unattested].drop(columns="attested").reset_index(drop=True)


def select_band_central(labels: pd.DataFrame, config: SelectionConfig,
                        external: Sequence[tuple[str, pd.DataFrame]] = ()) -> Selection:
    log = IssueLog()
    pool = _drop_unattested(build_pool(labels, config, external), config.include_unattested,
                            log)
    pool["role"] = None
    pool["val_target"] = np.nan
    pool["rank"] = -1
    measured = pool[pool["pass_rate"].notna()]
    in_range = measured[(measured["pass_rate"] >= config.lo - _EPS)
                        & (measured["pass_rate"] <= config.hi + _EPS)]
    train = _order(in_range, config.target, config.tiebreak).head(config.n)
    pool.loc[train.index, "role"] = "train"
    pool.loc[train.index, "rank"] = np.arange(len(train))
    if len(train) < config.n:
        log.add("short_selection", config.n - len(train),
                f"only {len(in_range)} task(s) have a pass rate in [{config.lo:g}, {config.hi:g}]"
                f"; selected {len(train)} of the {config.n} asked for. Fix: grade more tasks, "
                "add an --external set, or widen --range")
    rank = 0
    for target in config.val_targets:
        free = pool.loc[pool["role"].isna() & pool["pass_rate"].notna()
                        & ((pool["pass_rate"] - target).abs()
                           <= config.val_max_distance + _EPS)]
        picked = _order(free, target, config.tiebreak).head(config.val_n)
        pool.loc[picked.index, ["role", "val_target"]] = ["validation", target]
        pool.loc[picked.index, "rank"] = np.arange(rank, rank + len(picked))
        rank += len(picked)
        if len(picked) < config.val_n:
            log.add("short_validation", config.val_n - len(picked),
                    f"only {len(picked)} task(s) left for validation within "
                    f"{config.val_max_distance:g} of {target:g} ({config.val_n} asked for). "
                    "Fix: grade more tasks, add an --external set, or widen "
                    "--val-max-distance")
    unseen, train_name, val_name = config.names
    pool["split"] = pool["role"].map({"train": train_name, "validation": val_name}).fillna(unseen)
    return Selection(config=config, pool=pool, n_in_range=len(in_range), issues=log.issues)
