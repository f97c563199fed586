"""Labels: one row per task x model x scaffold, from trials.

``pass_rate = n_passed / n_counted`` over counted trials only: an infrastructure error
(``counted = false``) never moves a pass rate. ``k`` is the number of attempts planned for
the model: given; else what the grading runs planned, read from their run records
(:mod:`termgrade.labels.planned`); else inferred as the most counted attempts any task got
under it. Tasks with fewer counted trials than planned (for an adaptive run: than its
``k_min``, since it stops tasks between ``k_min`` and ``k`` by design), tasks missing for a
model, and attempts past a given ``k`` are reported as issues with counts.

Task versions: a trial records the digest of the task files it graded (``task_digest``).
Trials of one task graded at different versions do not measure one thing, so
:func:`compute_labels` refuses them (:class:`MixedDigestsError`) unless ``mix_digests``;
a label row carries its trials' ``task_digest`` and ``scaffold_digest`` when they agree
(null when unrecorded or mixed).

Attested tasks: a trial of an unattestable task (``attested: false``: its verifier runs
no pytest or decides outside it, so it was graded by ``test.sh``'s own reward) makes the
task unattested. :func:`compute_labels` leaves such tasks out unless
``include_unattested``, and says so either way (issue kind ``unattested``); a row's
``attested`` is false for them, true when every trial was attested, null when unrecorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from termgrade.core.errors import OptionError, RecordError
from termgrade.labels.errors import MixedDigestsError
from termgrade.labels.planned import planned
from termgrade.records import LabelRow
from termgrade.records.run import RunRecord
from termgrade.stats.bands import DEFAULT_SCHEME, BandScheme
from termgrade.trialsets.io import TrialSet
from termgrade.trialsets.issues import DataIssue, IssueLog, preview

KEYS = ["model", "scaffold", "task_id"]
LABEL_COLUMNS = ["task_id", "model", "scaffold", "pass_rate", "band", "n_counted", "k",
                 "n_passed", "attested"]
DIGEST_COLUMNS = ["task_digest", "scaffold_digest"]
"""Label columns the frame carries when its trials recorded them (not every reader's)."""
MIX_DIGESTS_FLAG = "--mix-digests"
UNATTESTED_FLAG = "--include-unattested"


KSpec = int | Mapping[str, int] | None


@dataclass
class LabelSet:
    """Labels as a frame with :data:`LABEL_COLUMNS` (pass_rate NaN when unmeasured)."""

    frame: pd.DataFrame
    scheme: BandScheme = DEFAULT_SCHEME
    issues: list[DataIssue] = field(default_factory=list)
    digests: dict[tuple[str, str, str], dict[str, str | None]] = field(default_factory=dict)
    """(task_id, model, scaffold) -> the :data:`DIGEST_COLUMNS` its trials agree on."""

    def rows(self) -> list[LabelRow]:
        records = self.frame[LABEL_COLUMNS].to_dict("records")
        return [LabelRow(**{**r, "pass_rate": None if pd.isna(r["pass_rate"]) else r["pass_rate"],
                            "band": None if pd.isna(r["pass_rate"]) else r["band"],
                            **self.digests.get((r["task_id"], r["model"], r["scaffold"]), {})})
                for r in records]


def _k_for(spec: KSpec, model: str, inferred: int) -> int:
    if spec is None:
        return inferred
    if isinstance(spec, int):
        return spec
    return int(spec.get(model, inferred))


def _limit_to_k(counted: pd.DataFrame, spec: KSpec, log: IssueLog) -> pd.DataFrame:
    """With an explicit k, keep each task's first k counted attempts (by attempt index)."""
    if spec is None or counted.empty:
        return counted
    inferred = counted.groupby(KEYS).size().groupby(["model", "scaffold"]).max()
    limits = {key: _k_for(spec, key[0], int(n)) for key, n in inferred.items()}
    ordered = counted.sort_values([*KEYS, "attempt", "retry_index"])
    rank = ordered.groupby(KEYS).cumcount()
    limit = pd.Series([limits[(m, s)] for m, s in zip(ordered["model"], ordered["scaffold"],
                                                      strict=True)], index=ordered.index)
    past = rank >= limit
    if past.any():
        tasks = ordered[past].drop_duplicates(KEYS)
        log.add("beyond_k", int(past.sum()),
                f"{int(past.sum())} counted trial(s) on {len(tasks)} task x model pair(s) come "
                f"after the first k attempts ({preview(tasks['task_id'] + '/' + tasks['model'])})"
                "; only the first k count toward the pass rate")
    return ordered[~past]


def _warn_short(labels: pd.DataFrame, log: IssueLog) -> None:
    """Tasks short of their plan: of ``k``, or of ``k_min`` where an adaptive run stopped
    tasks by design (its run records say so)."""
    for (model, scaffold), group in labels.groupby(["model", "scaffold"], sort=True):
        k = int(group["k"].iloc[0])
        short = group[group["n_counted"] < group["short_of"]]
        if short.empty:
            continue
        none = int((short["n_counted"] == 0).sum())
        floor = (f"the k_min={int(short['short_of'].min())} an adaptive run needs before it "
                 "stops a task" if bool(short["adaptive"].all()) else f"k={k}")
        log.add("mixed_k", len(short),
                f"{model} ({scaffold}): {len(short)} of {len(group)} task(s) have fewer than "
                f"{floor} counted trials (min {int(short['n_counted'].min())}; {none} with "
                "none, pass_rate null); their pass rates rest on fewer attempts. Fix: rerun "
                "the missing attempts" + ("" if bool(short["adaptive"].all())
                                          else ", or pass --k if k was inferred wrongly"))


def _warn_missing(labels: pd.DataFrame, log: IssueLog) -> None:
    for scaffold, group in labels.groupby("scaffold", sort=True):
        universe = set(group["task_id"])
        for model, rows in group.groupby("model", sort=True):
            missing = sorted(universe - set(rows["task_id"]))
            if missing:
                log.add("missing_tasks", len(missing),
                        f"{model} ({scaffold}) has no trials for {len(missing)} of "
                        f"{len(universe)} task(s) graded under {scaffold}: {preview(missing)}; "
                        "they get no label and paired comparisons skip them")


def _one_digest(values: pd.Series) -> str | None:
    kept = values.dropna().unique()
    return str(kept[0]) if len(kept) == 1 else None


def check_digests(frame: pd.DataFrame, source: str = "(input)") -> None:
    """Raise :class:`MixedDigestsError` when one task's trials carry different task
    digests (trials without one are not counted against it)."""
    if "task_digest" not in frame or frame.empty:
        return
    digests = frame.dropna(subset=["task_digest"]).groupby("task_id")["task_digest"].nunique()
    mixed = sorted(digests[digests > 1].index)
    if mixed:
        raise MixedDigestsError(
            source, f"{len(mixed)} task(s) have trials of different versions of their files "
            f"(task_digest): {preview(mixed)}; a pass rate over them measures no one task",
            fix="regrade them at their current version (`termgrade grade --reuse EARLIER_RUN` "
            f"reruns only the changed tasks) and label the new run, or pass {MIX_DIGESTS_FLAG} "
            "to label them all the same (their rows get task_digest null)")


def _digests(frame: pd.DataFrame) -> dict[tuple[str, str, str], dict[str, str | None]]:
    present = [c for c in DIGEST_COLUMNS if c in frame]
    if not present or frame.empty:
        return {}
    agreed = frame.groupby(KEYS, sort=True)[present].agg(_one_digest)
    return {(str(task), str(model), str(scaffold)): {
                c: (None if value is None or pd.isna(value) else str(value))
                for c, value in row.items()}
            for (model, scaffold, task), row in agreed.iterrows()}


def _warn_mixed_scaffolds(frame: pd.DataFrame, log: IssueLog) -> None:
    """A row whose trials ran one scaffold name under different configurations (two
    ``scaffold_digest`` values, or some with one and some without: TermGrade's native
    terminus-2 beside an ingested Harbor Terminus-2 job) pools what may not be one
    measurement: said, with the fix."""
    if "scaffold_digest" not in frame or frame.empty:
        return
    grouped = frame.groupby(KEYS, sort=True)["scaffold_digest"]
    kinds = grouped.nunique() + grouped.apply(lambda v: int(v.isna().any()))
    mixed = [f"{task} x {model} ({scaffold})"
             for (model, scaffold, task), n in kinds.items() if n > 1]
    if mixed:
        log.add("mixed_scaffolds", len(mixed),
                f"{len(mixed)} label row(s) pool trials of one scaffold name run under "
                f"different configurations (scaffold_digest differs or is unrecorded): "
                f"{preview(mixed)}; their pass rate mixes two harnesses (for example "
                "TermGrade's terminus-2 beside an ingested Harbor job): label them "
                "separately, or under distinct model names, if that matters")


def unattested_tasks(frame: pd.DataFrame) -> list[str]:
    """Task ids of which any trial says ``attested: false`` (sorted)."""
    if "attested" not in frame or frame.empty:
        return []
    return sorted(str(t) for t in frame.loc[frame["attested"].eq(False), "task_id"].unique())


def _without_unattested(frame: pd.DataFrame, include: bool, log: IssueLog) -> pd.DataFrame:
    unattested = unattested_tasks(frame)
    if not unattested:
        return frame
    if include:
        log.add("unattested", len(unattested),
                f"including {len(unattested)} unattested task(s) ({preview(unattested)}): "
                "their rewards are test.sh's own numbers, not computed from the grader's "
                "signed record; an agent that games such a verifier is not caught")
        return frame
    log.add("unattested", len(unattested),
            f"left out {len(unattested)} unattested task(s) ({preview(unattested)}): their "
            "verifiers cannot be attested (graded by test.sh's own reward); pass "
            f"{UNATTESTED_FLAG} to label them")
    kept = frame[~frame["task_id"].isin(unattested)]
    if kept.empty:
        raise RecordError("(input)", f"every task is unattested ({preview(unattested)})",
                          fix=f"pass {UNATTESTED_FLAG} to label them anyway")
    return kept


def _attested(frame: pd.DataFrame, labels: pd.DataFrame) -> list[bool | None]:
    """Per label row: False for an unattested task, True when every trial was attested."""
    unattested = set(unattested_tasks(frame))
    if "attested" not in frame:
        return [False if t in unattested else None for t in labels["task_id"]]
    all_true = frame.assign(_a=frame["attested"].eq(True)).groupby(KEYS)["_a"].all()
    return [False if task in unattested else (True if all_true.get((m, s, task)) else None)
            for m, s, task in zip(labels["model"], labels["scaffold"], labels["task_id"],
                                  strict=True)]


def compute_labels(trials: TrialSet | pd.DataFrame, *, k: KSpec = None,
                   scheme: BandScheme = DEFAULT_SCHEME, mix_digests: bool = False,
                   include_unattested: bool = False,
                   runs: Mapping[str, RunRecord] | None = None) -> LabelSet:
    """Labels of every task x model x scaffold present in ``trials``. ``runs``: the run
    records of their grading runs by ``job_id`` (:func:`termgrade.records.run.read_runs`),
    the source of ``k`` when it is not given. ``mix_digests``:
    label a task whose trials graded different versions of it (refused otherwise).
    ``include_unattested``: label unattested tasks too (left out otherwise; an issue of
    kind ``unattested`` names them either way)."""
    frame = trials.frame if isinstance(trials, TrialSet) else trials
    if frame.empty:
        raise RecordError("(input)", "no trial records to label",
                          fix="pass trial JSONL files that hold records")
    if not mix_digests:
        check_digests(frame)
    log = IssueLog()
    frame = _without_unattested(frame, include_unattested, log)
    counted = _limit_to_k(frame[frame["counted"]], k, log)
    present = frame.groupby(KEYS, sort=True).size().rename("n_trials")
    stats = counted.groupby(KEYS).agg(n_counted=("passed", "size"), n_passed=("passed", "sum"))
    labels = present.to_frame().join(stats, how="left").fillna({"n_counted": 0, "n_passed": 0})
    labels = labels.reset_index()
    labels["n_counted"] = labels["n_counted"].astype("int64")
    labels["n_passed"] = labels["n_passed"].astype("int64")
    inferred = labels.groupby(["model", "scaffold"])["n_counted"].transform("max")
    labels["k"] = [_k_for(k, m, int(i)) for m, i in zip(labels["model"], inferred, strict=True)]
    labels["k"] = labels["k"].astype("int64")
    labels["short_of"] = labels["k"]
    if k is None:
        plan = planned(frame, runs or {}, KEYS)
        labels = labels.join(plan, on=KEYS)
        known = labels["planned_k"].notna()
        labels.loc[known, "k"] = labels.loc[known, "planned_k"].astype("int64")
        labels.loc[known, "short_of"] = labels.loc[known, "planned_min"].astype("int64")
        labels["adaptive"] = labels["adaptive"].eq(True)
    else:
        labels["adaptive"] = False
    with np.errstate(invalid="ignore", divide="ignore"):
        labels["pass_rate"] = np.where(labels["n_counted"] > 0,
                                       labels["n_passed"] / labels["n_counted"], np.nan)
    labels["band"] = scheme.assign(labels["pass_rate"].to_numpy())
    labels["attested"] = pd.Series(_attested(frame, labels), index=labels.index, dtype=object)
    _warn_short(labels, log)
    _warn_missing(labels, log)
    _warn_mixed_scaffolds(frame, log)
    return LabelSet(frame=labels[LABEL_COLUMNS].reset_index(drop=True), scheme=scheme,
                    issues=log.issues, digests=_digests(frame))


def require_counted(labels: LabelSet, source: str = "(input)") -> None:
    """Raise :class:`RecordError` when a task x model has no counted trial (every trial
    lost to infrastructure): its row would carry ``k`` but no pass rate, and a reader
    would take it for a measurement. Names the pairs and the fix."""
    frame = labels.frame
    empty = frame[frame["n_counted"] == 0]
    if empty.empty:
        return
    pairs = [f"{t} x {m} ({s})" for t, m, s in
             zip(empty["task_id"], empty["model"], empty["scaffold"], strict=True)]
    first = empty.iloc[0]
    raise RecordError(
        source, f"{len(pairs)} task x model pair(s) have no counted trial (every trial "
        f"lost to infrastructure), so no pass rate: {preview(pairs)}",
        fix=f"grade them again (`termgrade grade` on the same output resumes; e.g. task "
        f"{first['task_id']} with --model {first['model']}), or pass --keep-uncounted to "
        "write their rows with pass_rate null")


def parse_k(values: list[str] | None) -> KSpec:
    """``["8"]`` -> 8; ``["model-a=8", "model-b=2"]`` -> mapping; nothing -> inferred."""
    if not values:
        return None
    if len(values) == 1 and "=" not in values[0]:
        return _positive(values[0], "--k")
    mapping: dict[str, int] = {}
    for value in values:
        model, sep, number = value.rpartition("=")
        if not sep or not model:
            raise OptionError(f"--k: {value!r} is not MODEL=K",
                              fix="use --k 8 for every model, or --k MODEL=K per model")
        mapping[model] = _positive(number, "--k")
    return mapping


def _positive(text: str, option: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise OptionError(f"{option}: {text!r} is not a positive whole number", fix="e.g. 8")
    return value
