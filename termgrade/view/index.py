"""The index of a run: its trial frame, its labels, and one cell per task x model x scaffold.

Numbers come from the functions ``termgrade labels`` and ``termgrade report`` use, so the
viewer and the report agree: the trial frame is the one
:mod:`termgrade.trialsets.frame` builds and :func:`~termgrade.trialsets.checks.check_trials`
checks; labels (pass rate, band, counted trials) are the labels file's or
:func:`~termgrade.labels.compute_labels`'s; per-configuration pass@k and band counts are
:func:`~termgrade.passrates.summary.summarize_configs`'s; near-misses are
:func:`~termgrade.records.near_miss.near_miss`'s and the report's
:func:`~termgrade.passrates.trialstats.near_misses`. Each trial row also keeps its file, byte
offset and length (:mod:`.scan`), its failure reason (:mod:`.reasons`) and its config.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from termgrade.core.errors import DataWarning, RecordError
from termgrade.labels import DEFAULT_SCHEME, BandScheme, compute_labels, read_labels
from termgrade.labels.compute import KEYS
from termgrade.passrates.models import ConfigSummary, NearMisses
from termgrade.passrates.summary import config_names, summarize_configs
from termgrade.passrates.trialstats import near_misses
from termgrade.records import TrialRecord
from termgrade.records.near_miss import NEAR_MISS_MIN_PASSED, near_miss
from termgrade.records.run import read_runs
from termgrade.trialsets.checks import check_trials
from termgrade.trialsets.issues import DataIssue, IssueLog
from termgrade.view.reasons import classify
from termgrade.view.scan import read_line, scan_file
from termgrade.view.sources import RunSources

CELL_KEYS = ["task_id", "model", "scaffold"]
"""How the viewer names a cell (task first); the labels sort by :data:`KEYS`."""


@dataclass
class RunIndex:
    """Everything the pages need, in memory; transcripts stay on disk."""

    trials: pd.DataFrame
    """The trial frame plus ``offset``, ``length``, ``exception_type``,
    ``exception_message``, ``agent_timed_out``, ``reason``, ``near_miss``, ``config`` and
    ``cell`` (its row in :attr:`cells`); the row number is the trial's key in the viewer."""
    labels: pd.DataFrame
    """Label rows (:data:`termgrade.labels.LABEL_COLUMNS`) plus ``config``."""
    cells: pd.DataFrame
    """One row per task x model x scaffold: the label, ``n_trials``, ``n_lost``,
    ``median_turns``, ``median_tokens``, ``n_near_miss``, ``reasons`` and ``split``."""
    configs: list[ConfigSummary]
    near_misses: NearMisses
    sources: RunSources
    issues: list[DataIssue] = field(default_factory=list)
    scheme: BandScheme = DEFAULT_SCHEME
    groups: dict[tuple[str, str, str], np.ndarray] = field(default_factory=dict)
    """(task_id, model, scaffold) -> its trials' row numbers, in attempt order."""

    def __post_init__(self) -> None:
        if not self.groups and not self.trials.empty:
            self.groups = {(str(key[0]), str(key[1]), str(key[2])): rows for key, rows in
                           self.trials.groupby(CELL_KEYS, sort=False).indices.items()}
        self._reward = self.trials["reward"].to_numpy(dtype="float64")
        self._counted = self.trials["counted"].to_numpy(dtype=bool)

    def rewards(self, task_id: str, model: str, scaffold: str) -> list[tuple[float | None, bool]]:
        """(reward, counted) of a cell's trials in attempt order (reward None: unscored)."""
        rows = self.groups.get((task_id, model, scaffold))
        if rows is None:
            return []
        return [(None if np.isnan(r) else float(r), bool(c))
                for r, c in zip(self._reward[rows], self._counted[rows], strict=True)]

    @property
    def config_order(self) -> list[str]:
        return [c.config for c in self.configs]

    def trial(self, row: int) -> TrialRecord:
        """The whole record of trial ``row``, read from its one line."""
        t = self.trials.iloc[row]
        return read_line(Path(t["file"]), int(t["offset"]), int(t["length"]), int(t["line"]))

    def cell_trials(self, task_id: str, model: str, scaffold: str) -> pd.DataFrame:
        """The trials of one cell, in attempt order (rows keep their numbers)."""
        rows = self.groups.get((task_id, model, scaffold))
        return self.trials.iloc[[] if rows is None else rows]


def _trial_frame(sources: RunSources, log: IssueLog) -> pd.DataFrame:
    parts = []
    for path in sources.trials:
        part = scan_file(path)
        if part is None:
            log.add("empty_file", 1, f"{path} holds no trial records; it was skipped")
            continue
        parts.append(part)
    if not parts:
        raise RecordError(", ".join(map(str, sources.trials)), "holds no trial records",
                          fix="pass the trials.jsonl of a `termgrade grade` or `ingest` run")
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame = check_trials(frame, log).reset_index(drop=True)
    frame["reason"] = [classify(passed=bool(p), counted=bool(c), message=m,
                                agent_timed_out=bool(a))
                       for p, c, m, a in zip(frame["passed"], frame["counted"],
                                             frame["exception_message"],
                                             frame["agent_timed_out"], strict=True)]
    frame["near_miss"] = near_miss(frame["counted"], frame["passed"], frame["n_tests_failed"],
                                   frame["n_tests_passed"], min_passed=NEAR_MISS_MIN_PASSED)
    frame["config"] = config_names(frame)
    return frame.sort_values([*KEYS, "attempt", "retry_index"], ignore_index=True)


def _splits(*paths: Path | None) -> dict[str, str]:
    """task_id -> split, from a labels file that carries splits or a splits file."""
    out: dict[str, str] = {}
    for path in paths:
        if path is None:
            continue
        with path.open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    row = json.loads(raw)
                    if row.get("split"):
                        out[str(row["task_id"])] = str(row["split"])
    return out


def _flag(value: object) -> bool | None:
    """True, False or None (null, NaN) from a label or trial ``attested`` value."""
    if value is None or bool(pd.isna(value)):
        return None
    return bool(value)


def _trial_attested(trials: pd.DataFrame) -> pd.Series:
    """Per cell (KEYS): False when a trial says unattested, True when every trial is
    attested, None when unrecorded (a label row's ``attested`` as labels computes it)."""
    attested = trials["attested"] if "attested" in trials else pd.Series(None, trials.index)
    flags = trials[KEYS].assign(_false=attested.eq(False), _true=attested.eq(True))
    groups = flags.groupby(KEYS, sort=True)
    false, true = groups["_false"].any(), groups["_true"].all()
    return pd.Series([False if f else (True if t else None) for f, t in zip(false, true,
                                                                             strict=True)],
                     index=false.index, dtype=object, name="trial_attested")


def _cells(trials: pd.DataFrame, labels: pd.DataFrame, splits: dict[str, str]) -> pd.DataFrame:
    counted = trials[trials["counted"]].copy()
    counted["tokens"] = counted["input_tokens"].fillna(0) + counted["output_tokens"].fillna(0)
    counted.loc[counted["input_tokens"].isna() & counted["output_tokens"].isna(),
                "tokens"] = np.nan
    flags = trials[KEYS].assign(lost=~trials["counted"].astype(bool),
                                near=trials["near_miss"].astype(bool))
    groups = flags.groupby(KEYS, sort=True)
    extra = pd.DataFrame({"n_trials": groups.size(),
                          "n_lost": groups["lost"].sum().astype("int64"),
                          "n_near_miss": groups["near"].sum().astype("int64")})
    found: dict[tuple[str, ...], set[str]] = {}
    for key in trials.groupby([*KEYS, "reason"], sort=False).size().index:
        found.setdefault(tuple(key[:3]), set()).add(str(key[3]))
    extra["reasons"] = [frozenset(found.get(tuple(k), ())) for k in extra.index]
    medians = counted.groupby(KEYS).agg(median_turns=("turns", "median"),
                                        median_tokens=("tokens", "median"))
    extra = extra.join(medians, how="left").join(_trial_attested(trials)).reset_index()
    cells = labels.merge(extra, on=KEYS, how="outer")
    own = cells["attested"] if "attested" in cells else pd.Series(None, cells.index)
    cells["attested"] = pd.Series(
        [_flag(a) if _flag(a) is not None else _flag(t)
         for a, t in zip(own, cells.pop("trial_attested"), strict=True)],
        index=cells.index, dtype=object)
    for column in ("n_trials", "n_lost", "n_near_miss", "n_counted", "n_passed", "k"):
        cells[column] = cells[column].fillna(0).astype("int64")
    cells["reasons"] = [r if isinstance(r, frozenset) else frozenset() for r in cells["reasons"]]
    cells["split"] = [splits.get(t) for t in cells["task_id"]]
    cells["config"] = config_names(cells)
    return cells.sort_values(["task_id", "config"], ignore_index=True)


def check_labels_match(labels: pd.DataFrame, trials: pd.DataFrame, path: Path) -> None:
    """Raise :class:`RecordError` unless every label row counts exactly the counted and
    passed trials these trial files hold for its cell: a page never shows one set of
    labels beside panels and trial pages drawn from other trials."""
    counted = trials[trials["counted"]]
    have = counted.groupby(KEYS).agg(n=("passed", "size"), p=("passed", "sum"))
    for row in labels.itertuples():
        key = (row.model, row.scaffold, row.task_id)
        n, p = (int(have.loc[key, "n"]), int(have.loc[key, "p"])) if key in have.index \
            else (0, 0)
        if (n, p) != (int(row.n_counted), int(row.n_passed)):
            raise RecordError(
                str(path), f"--labels: {row.task_id} x {row.model} ({row.scaffold}) counts "
                f"{int(row.n_counted)} trial(s), {int(row.n_passed)} passed, where the trials "
                f"shown hold {n}, {p} passed: the labels were computed from other trials "
                "(or with --k), and the page would mix the two",
                fix="leave --labels out (the labels are then computed from these trials), "
                "or relabel these trials: termgrade labels TRIALS -o FILE")


def load_run(sources: RunSources, *, scheme: BandScheme = DEFAULT_SCHEME,
             include_unattested: bool = False) -> RunIndex:
    """Index the run: one streaming pass per trial file, then the aggregates.
    ``include_unattested``: label unattested tasks too, as ``termgrade labels
    --include-unattested`` does (their pass rates are shown apart from attested ones)."""
    log = IssueLog()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # the pages list the issues
        trials = _trial_frame(sources, log)
        if sources.labels is not None:
            labels = read_labels([sources.labels])
            check_labels_match(labels, trials, sources.labels)
        else:
            label_set = compute_labels(trials, scheme=scheme, runs=read_runs(sources.trials),
                                       include_unattested=include_unattested)
            labels = label_set.frame
            log.extend(label_set.issues)
    labels = labels.copy()
    labels["config"] = config_names(labels)
    cells = _cells(trials, labels, _splits(sources.splits, sources.labels))
    where = {key: row for row, key in enumerate(zip(cells["task_id"], cells["model"],
                                                     cells["scaffold"], strict=True))}
    trials["cell"] = np.asarray([where[key] for key in zip(
        trials["task_id"], trials["model"], trials["scaffold"], strict=True)], dtype="int64")
    return RunIndex(trials=trials, labels=labels, cells=cells,
                    configs=summarize_configs(labels[labels.columns.drop("config")]),
                    near_misses=near_misses(trials), sources=sources, issues=log.issues,
                    scheme=scheme)
