"""Consistency checks on the trial frame: hard errors for contradictions, issues for the rest."""

from __future__ import annotations

import pandas as pd

from termgrade.core.errors import RecordError
from termgrade.trialsets.issues import IssueLog, preview

SLOT = ["task_id", "model", "scaffold", "attempt"]


def _where(frame: pd.DataFrame, mask: pd.Series) -> str:
    row = frame[mask].iloc[0]
    return f"{row['file']}:{row['line']}"


def _duplicate_ids(frame: pd.DataFrame) -> None:
    dup = frame["trial_id"].duplicated(keep=False)
    if not dup.any():
        return
    first = frame.loc[dup, "trial_id"].iloc[0]
    places = frame[frame["trial_id"] == first]
    where = preview([f"{r.file}:{r.line}" for r in places.itertuples()], limit=2)
    raise RecordError(where, f"field 'trial_id': {first!r} appears {len(places)} times "
                      f"({int(dup.sum())} records share an id with another)",
                      fix="pass each trial file once; give retries their own trial_id")


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
    counted = frame[frame["counted"]]
    dup = counted.duplicated(SLOT, keep=False)
    if not dup.any():
        return frame
    group = counted[dup].sort_values(["retry_index", "line"])
    losers = group.index.difference(group.drop_duplicates(SLOT, keep="last").index)
    slots = group.drop_duplicates(SLOT)
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
    _duplicate_ids(frame)
    frame = _unscored(frame.copy(), log)
    _contradictions(frame)
    return _duplicate_slots(frame, log)
