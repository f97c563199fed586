"""What the task's reference solution did when ``verify`` ran it: the record that the
grader's transfer set and decision rule are judged against.

``verify`` writes one per task digest (:func:`save_reference`); ``run_task`` reads it
(:func:`reference_for`). A task without one (third-party corpora ship no solution, or
``verify`` never ran here) is graded without it: the transfer set is derived from the
task's text alone and only markers written in the tests' source are neutral.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from termgrade.core.atomic import atomic_write_text
from termgrade.core.settings import SETTINGS
from termgrade.task import Task
from termgrade.task.digest import REFERENCE_FILE, task_digest

REFERENCE_FORMAT = "1.0"


class ReferenceRecord(BaseModel):
    """The reference solution's run of one task (one digest)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = REFERENCE_FORMAT
    task_digest: str = Field(description="The task's content digest this run is of.")
    tests: dict[str, str] = Field(
        default_factory=dict,
        description="Per attested test node id: its outcome under the reference solution "
                    "(passed, failed, skipped, xfailed, xpassed, error).")
    footprint: list[str] = Field(
        default_factory=list,
        description="Absolute container paths the reference solution changed (top-most "
                    "changed entries; the grader's transfer set includes them).")
    attested: bool = Field(
        True, description="Could the reference run be attested (every decision covered by "
                          "an attested pytest session)?")
    attest_reason: str | None = Field(
        None, description="Why the task is not attestable, when it is not.")


def reference_dir() -> Path:
    """``TERMGRADE_REFERENCE_DIR``, else ``<state dir>/references``."""
    return SETTINGS.reference_dir


def _read(path: Path) -> ReferenceRecord | None:
    try:
        return ReferenceRecord.model_validate(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def reference_for(task: Task) -> ReferenceRecord | None:
    """The recorded reference run of ``task``'s current content, or None: the one shipped
    in the task's folder (:data:`~termgrade.task.digest.REFERENCE_FILE`, from a published
    repo), else the one ``verify`` saved here. A record of other content is never used."""
    digest = task_digest(task.paths.root)
    for path in (task.paths.root / REFERENCE_FILE, reference_dir() / f"{digest}.json"):
        found = _read(path)
        if found is not None and found.task_digest == digest:
            return found
    return None


def write_reference_file(root: Path, record: ReferenceRecord) -> Path:
    """Ship ``record`` in the task folder ``root`` (a staged or materialized copy)."""
    path = Path(root) / REFERENCE_FILE
    atomic_write_text(path, record.model_dump_json(indent=1) + "\n")
    return path


def save_reference(record: ReferenceRecord) -> Path:
    """Write ``record`` atomically under :func:`reference_dir`; returns its path."""
    path = reference_dir() / f"{record.task_digest}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, record.model_dump_json(indent=2))
    return path
