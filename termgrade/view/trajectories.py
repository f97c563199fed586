"""A staged trajectories repo (``termgrade build trajectories``) read back as trials.

The repo's ``sft`` and ``episodes`` configs hold one row per trial each, written in the
same order (:mod:`termgrade.builders.trajectory_writer`) and joined by ``trial_id``. They
are read a batch at a time and put back together as :class:`~termgrade.records.
TrialRecord` lines (episode steps get their spanned text back from the messages,
:func:`termgrade.builders.trajectory_rows.resolve_steps`) in a ``trials.jsonl`` the viewer
then indexes like any run's, beside a ``splits.jsonl`` of each task's ``split``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from termgrade.builders.layout import RepoPaths
from termgrade.builders.trajectory_rows import resolve_steps
from termgrade.core.atomic import atomic_writer
from termgrade.core.errors import RecordError
from termgrade.records import TrialRecord

BATCH_ROWS = 256
_STEP_FIELDS = ("index", "source", "message", "keystrokes", "observation",
                "is_valid_tool_call", "input_tokens", "output_tokens", "cached_tokens",
                "timestamp")
_TRIAL_FIELDS = set(TrialRecord.model_fields)


def _config_files(repo: Path, config: str) -> list[Path]:
    return sorted(RepoPaths(repo).config_dir(config).glob("*.parquet"))


def is_trajectories_repo(path: Path) -> bool:
    return Path(path).is_dir() and bool(_config_files(path, "sft")) and bool(
        _config_files(path, "episodes"))


def _rows(files: list[Path]) -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
            for row in batch.to_pylist():
                yield path, row


def _clean(value: Any) -> Any:
    """Nulls of the Arrow form dropped (the record leaves absent fields out)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def trial_of(sft: dict[str, Any], episode: dict[str, Any]) -> dict[str, Any]:
    """One trial record (a JSON-mode dict) from its ``sft`` and ``episodes`` rows."""
    messages = sft.get("messages") or []
    steps = [{k: s.get(k) for k in _STEP_FIELDS}
             for s in resolve_steps(episode.get("steps") or [], messages)]
    record = {k: v for k, v in {**episode, **sft}.items() if k in _TRIAL_FIELDS}
    record["messages"] = _clean(messages) if messages else None
    record["messages_source"] = (None if sft.get("messages_source") in (None, "none")
                                 else sft["messages_source"])
    record["episode"] = [{k: v for k, v in s.items() if v is not None or k == "message"}
                         for s in steps] or None
    for step in record["episode"] or []:
        step["message"] = step.get("message") or ""
        step["observation"] = step.get("observation") or ""
    run_id = episode.get("run_id")
    record["job_id"] = run_id if run_id and run_id != episode.get("source") else None
    record["per_turn"] = [_clean(t) for t in episode.get("per_turn") or []]
    return record


def trials_from_repo(repo: Path, out_dir: Path) -> tuple[Path, Path]:
    """Write ``out_dir/trials.jsonl`` and ``out_dir/splits.jsonl`` from the repo."""
    sft_files, episode_files = _config_files(repo, "sft"), _config_files(repo, "episodes")
    trials, splits_path = out_dir / "trials.jsonl", out_dir / "splits.jsonl"
    splits: dict[str, str] = {}
    episodes = _rows(episode_files)
    with atomic_writer(trials) as handle:
        for path, sft in _rows(sft_files):
            found = next(episodes, None)
            if found is None or found[1]["trial_id"] != sft["trial_id"]:
                raise RecordError(str(path), f"trial {sft['trial_id']!r}: its episodes row "
                                  "is not beside it (the configs are out of step)",
                                  fix="rebuild the repo with `termgrade build trajectories`")
            record = TrialRecord.model_validate(trial_of(sft, found[1]))
            handle.write((record.model_dump_json() + "\n").encode("utf-8"))
            if sft.get("split"):
                splits[str(sft["task_id"])] = str(sft["split"])
    with atomic_writer(splits_path) as handle:
        for task_id, split in sorted(splits.items()):
            handle.write((json.dumps({"task_id": task_id, "split": split}) + "\n").encode())
    return trials, splits_path
