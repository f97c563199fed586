"""The analysis frame: one row per trial, only the columns labels and reports need.

Columns (nullable numbers are float with NaN): trial_id, task_id, model, scaffold, attempt,
retry_index, retry_of, reward, reward_nan (the reward was a NaN float, not null), passed,
counted, n_tests_passed, n_tests_failed, failed_test (the one failed test's name when
exactly one failed), failed_message (then its ``name: message``, when recorded),
input_tokens, output_tokens, turns, duration_s, task_digest,
scaffold_digest (null when unrecorded), job_id (the run; null in older files), attested
(True, False or None when unrecorded), regraded_from (``termgrade regrade``: the trial this
one scored again; null otherwise), file, line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from termgrade.records import TrialRecord

FAILED_OUTCOMES = ("failed", "error")
PLAIN_COLUMNS = ("trial_id", "task_id", "model", "scaffold", "attempt", "retry_index",
                 "retry_of", "reward", "passed", "counted", "input_tokens", "output_tokens",
                 "turns", "duration_s", "task_digest", "scaffold_digest", "job_id", "attested",
                 "regraded_from")
COLUMNS = (*PLAIN_COLUMNS, "reward_nan", "n_tests_passed", "n_tests_failed", "failed_test",
           "failed_message", "file", "line")
_FLOATS = ("reward", "input_tokens", "output_tokens", "turns", "duration_s",
           "n_tests_passed", "n_tests_failed")


_STRINGS = ("trial_id", "task_id", "model", "scaffold", "retry_of", "failed_test",
            "failed_message", "file",
            "task_digest", "scaffold_digest", "job_id", "regraded_from")


def _finish(frame: pd.DataFrame) -> pd.DataFrame:
    for column in _STRINGS:
        frame[column] = frame[column].astype("str")  # missing values become NaN
    for column in _FLOATS:
        frame[column] = frame[column].astype("float64")
    for column in ("attempt", "retry_index", "line"):
        frame[column] = frame[column].astype("int64")
    for column in ("passed", "counted", "reward_nan"):
        frame[column] = frame[column].astype(bool)
    frame["attested"] = frame["attested"].astype(object).where(frame["attested"].notna(), None)
    return frame[list(COLUMNS)]


def _test_counts(tests: pa.Array, n: int) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """Per row: tests passed, tests failed (NaN when the row lists none), single failed name."""
    flat = pc.list_flatten(tests)
    parents = pc.list_parent_indices(tests).to_numpy()
    outcome = pc.struct_field(flat, "outcome")
    passed = pc.equal(outcome, "passed").to_numpy(zero_copy_only=False)
    failed = pc.is_in(outcome, pa.array(FAILED_OUTCOMES)).to_numpy(zero_copy_only=False)
    listed = np.bincount(parents, minlength=n) > 0
    n_pass = np.where(listed, np.bincount(parents[passed], minlength=n), np.nan)
    n_fail_int = np.bincount(parents[failed], minlength=n)
    n_fail = np.where(listed, n_fail_int, np.nan)
    names: list[str | None] = [None] * n
    fail_names = pc.struct_field(flat, "name").to_numpy(zero_copy_only=False)[failed]
    for parent, name in zip(parents[failed], fail_names, strict=True):
        if n_fail_int[parent] == 1:
            names[parent] = str(name)
    return n_pass, n_fail, names


def _single_messages(table: pa.Table, names: list[str | None]) -> list[str | None]:
    """The one failed test's ``name: message`` (``failure_messages``) where exactly one
    failed; None where none is recorded (older files have no such column)."""
    if "failure_messages" not in table.column_names:
        return [None] * len(names)
    kept = table.column("failure_messages").to_pylist()
    return [m[0] if name is not None and m else None for name, m in zip(names, kept,
                                                                          strict=True)]


def frame_from_table(table: pa.Table, file: str, lines: Sequence[int]) -> pd.DataFrame:
    """Frame of a table that :func:`termgrade.trialsets.fastpath.fast_read` vouched for."""
    n = table.num_rows
    frame = table.select(list(PLAIN_COLUMNS)).to_pandas()
    reward = table.column("reward")
    frame["reward_nan"] = pc.fill_null(pc.is_nan(reward), False).to_numpy(zero_copy_only=False)
    tests = table.column("tests").combine_chunks()
    n_pass, n_fail, names = _test_counts(tests, n)
    given_pass = table.column("n_tests_passed").to_numpy(zero_copy_only=False).astype("float64")
    given_fail = table.column("n_tests_failed").to_numpy(zero_copy_only=False).astype("float64")
    frame["n_tests_passed"] = np.where(np.isnan(given_pass), n_pass, given_pass)
    frame["n_tests_failed"] = np.where(np.isnan(given_fail), n_fail, given_fail)
    frame["failed_test"] = names
    frame["failed_message"] = _single_messages(table, names)
    frame["file"] = file
    frame["line"] = np.asarray(lines, dtype="int64")
    return _finish(frame)


def frame_from_records(records: Sequence[TrialRecord], file: str,
                       lines: Sequence[int]) -> pd.DataFrame:
    """The same frame from validated records (the exact, slower path)."""
    rows = []
    for record in records:
        row = {c: getattr(record, c) for c in PLAIN_COLUMNS}
        fails = [t.name for t in record.tests if t.outcome in FAILED_OUTCOMES]
        listed = bool(record.tests)
        n_pass = sum(t.outcome == "passed" for t in record.tests) if listed else math.nan
        row["n_tests_passed"] = (record.n_tests_passed if record.n_tests_passed is not None
                                 else n_pass)
        row["n_tests_failed"] = (record.n_tests_failed if record.n_tests_failed is not None
                                 else (len(fails) if listed else math.nan))
        row["failed_test"] = fails[0] if len(fails) == 1 else None
        row["failed_message"] = (record.failure_messages[0] if len(fails) == 1
                                 and record.failure_messages else None)
        reward = record.reward
        row["reward_nan"] = reward is not None and math.isnan(reward)
        row["reward"] = math.nan if reward is None else reward
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("file", "line")])
    frame["file"] = file
    frame["line"] = np.asarray(lines, dtype="int64")
    for column in _FLOATS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return _finish(frame)


def empty_frame() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype="object") for c in COLUMNS})
    return _finish(frame)
