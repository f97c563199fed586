"""Consistency checks on the trial frame: hard errors for contradictions, issues for the rest."""

from __future__ import annotations

import pandas as pd

from termgrade.core.errors import RecordError
from termgrade.trialsets.frame import COLUMNS
from termgrade.trialsets.issues import IssueLog, preview

SLOT = ["task_id", "model", "scaffold", "attempt"]


def _where(frame: pd.DataFrame, mask: pd.Series) -> str:
    row = frame[mask].iloc[0]
    return f"{row['file']}:{row['line']}"


def run_keys(frame: pd.DataFrame) -> pd.Series:
    """The run of each trial: its ``job_id``, or its file for trials written before runs had
    ids (so two such files of one model are two runs, not one)."""
    return frame["job_id"].where(frame["job_id"].notna(), "file:" + frame["file"].astype(str))


def _places(frame: pd.DataFrame, trial: str) -> str:
    places = frame[frame["trial_id"] == trial]
    return preview([f"{r.file}:{r.line}" for r in places.itertuples()], limit=2)


def _duplicate_ids(frame: pd.DataFrame, log: IssueLog) -> pd.DataFrame:
    """One trial read twice: refused within a file, counted once when another run reused it
    (``grade --reuse`` copies a trial, its id kept), refused when two different trials
    share an id, except in files written before runs had ids (each file is its own run)."""
    dup = frame["trial_id"].duplicated(keep=False)
    if not dup.any():
        return frame
    same_file = frame.duplicated(["trial_id", "file"], keep=False)
    if same_file.any():
        first = frame.loc[same_file, "trial_id"].iloc[0]
        raise RecordError(_places(frame, first), f"field 'trial_id': {first!r} appears "
                          f"{int((frame['trial_id'] == first).sum())} times",
                          fix="pass each trial file once; a trials file never holds one "
                          "trial twice (restore it from its run)")
    content = [c for c in COLUMNS if c not in ("job_id", "file", "line")]
    copies = dup & frame.duplicated(content, keep="first")
    if copies.any():
        log.add("reused_trial", int(copies.sum()),
                f"{int(copies.sum())} trial(s) appear in more than one run (a later run "
                f"reused them with `grade --reuse`; first: {frame.loc[copies, 'trial_id'].iloc[0]}"
                "); each is counted once.")
        frame = frame[~copies]
    dup = frame["trial_id"].duplicated(keep=False)
    clash = dup & frame.groupby("trial_id")["job_id"].transform(lambda s: s.notna().any())
    if clash.any():
        first = frame.loc[clash, "trial_id"].iloc[0]
        raise RecordError(_places(frame, first), f"field 'trial_id': {first!r} names "
                          f"{int((frame['trial_id'] == first).sum())} different trials",
                          fix="pass each run's trials once; `termgrade grade` gives every "
                          "run its own trial ids (see `termgrade runs DIR`), so a clash "
                          "means an edited or foreign file")
    return frame


def _superseded(frame: pd.DataFrame, log: IssueLog) -> pd.DataFrame:
    """A trial that a ``termgrade regrade`` trial read with it scored again
    (``regraded_from``) is the same attempt: the regrade's verdict supersedes it, so each
    real attempt counts once."""
    if "regraded_from" not in frame or frame.empty:
        return frame
    sources = set(frame["regraded_from"].dropna())
    old = frame["trial_id"].isin(sources)
    if not old.any():
        return frame
    first = frame.loc[old, "trial_id"].iloc[0]
    by = frame.loc[frame["regraded_from"] == first, "trial_id"].iloc[0]
    log.add("regraded", int(old.sum()),
            f"{int(old.sum())} trial(s) were scored again by a `termgrade regrade` run read "
            f"with them (first: {first}, regraded as {by}); each attempt is counted once, "
            "with the regrade's verdict.")
    return frame[~old]


def _split_configurations(frame: pd.DataFrame, log: IssueLog) -> pd.DataFrame:
    """Runs of one model and scaffold with different configurations (``scaffold_digest``:
    prompt, tools, limits, sampling) measure different things: their scaffold becomes
    ``scaffold@<digest[:8]>`` so labels, report and view keep them apart."""
    known = frame[frame["scaffold_digest"].notna()]
    configs = known.groupby(["model", "scaffold"])["scaffold_digest"].nunique()
    mixed = configs[configs > 1]
    if mixed.empty:
        return frame
    frame = frame.copy()
    for (model, scaffold), n in mixed.items():
        rows = ((frame["model"] == model) & (frame["scaffold"] == scaffold)
                & frame["scaffold_digest"].notna())
        frame.loc[rows, "scaffold"] = scaffold + "@" + frame.loc[rows, "scaffold_digest"].str[:8]
        names = sorted(frame.loc[rows, "scaffold"].unique())
        log.add("configurations", int(n),
                f"{model} ({scaffold}) was graded with {n} configurations (scaffold_digest); "
                f"kept apart as {', '.join(names)}. Fix: to pool them, grade with one "
                "configuration.")
    return frame


def _unscored(frame: pd.DataFrame, log: IssueLog) -> pd.DataFrame:
    nan = frame["counted"] & frame["reward_nan"]
    null = frame["counted"] & frame["reward"].isna() & ~frame["reward_nan"]
    for mask, kind, what in ((nan, "nan_reward", "a NaN reward"),
                             (null, "unscored_counted", "counted=true but reward null")):
        if mask.any():
            marked = int((mask & frame["passed"]).sum())
            log.add(kind, int(mask.sum()),
                    f"{int(mask.sum())} counted trial(s) have {what} (first at "
                    f"{_where(frame, mask)}; {marked} marked passed); they are treated as "
                    "unscored and do not count toward any pass rate. Fix: regrade them, or "
                    "set counted=false for infrastructure errors.")
            frame.loc[mask, ["counted", "passed"]] = False
    return frame


def _contradictions(frame: pd.DataFrame) -> None:
    reward = frame["reward"]
    checks = (
        (frame["passed"] & ~frame["counted"], "passed=true on a trial with counted=false"),
        (frame["passed"] & reward.notna() & (reward < 1), "passed=true but reward < 1"),
        (frame["counted"] & ~frame["passed"] & (reward >= 1), "passed=false but reward >= 1"),
    )
    for mask, what in checks:
        if mask.any():
            raise RecordError(_where(frame, mask), f"field 'passed': {what} "
                              f"({int(mask.sum())} record(s) like this)",
                              fix="passed must be reward >= 1 on a counted trial, else false")


def _duplicate_slots(frame: pd.DataFrame, log: IssueLog) -> pd.DataFrame:
    counted = frame[frame["counted"]].assign(run=lambda f: run_keys(f))
    dup = counted.duplicated([*SLOT, "run"], keep=False)
    if not dup.any():
        return frame
    group = counted[dup].sort_values(["retry_index", "line"])
    losers = group.index.difference(group.drop_duplicates([*SLOT, "run"], keep="last").index)
    slots = group.drop_duplicates([*SLOT, "run"])
    names = [f"{r.task_id}/{r.model}#{r.attempt}" for r in slots.itertuples()]
    log.add("duplicate_slot", len(losers),
            f"{len(slots)} attempt slot(s) hold more than one counted trial ({preview(names)}); "
            f"kept the latest retry of each and ignored {len(losers)} other(s). Fix: set "
            "counted=false on superseded trials.")
    frame.loc[losers, "counted"] = False
    frame.loc[losers, "passed"] = False
    return frame


def check_trials(frame: pd.DataFrame, log: IssueLog) -> pd.DataFrame:
    """Raise RecordError on contradictions; record and neutralise the rest. Returns the frame."""
    if frame.empty:
        return frame
    frame = _split_configurations(_superseded(_duplicate_ids(frame, log), log), log)
    frame = _unscored(frame.copy(), log)
    _contradictions(frame)
    return _duplicate_slots(frame, log)
