"""What the task's reference solution did when it ran (``verify``, ``run --agent oracle``,
or the reference run ``grade`` and ``run`` make first): the record that the grader's
transfer set and decision rule are judged against.

One record per task digest (:func:`save_reference`), in the user's cache directory
(:attr:`~termgrade.core.settings.Settings.reference_dir`), so every command finds it from
any working directory; :func:`reference_for` reads it, the one shipped beside a staged or
materialized task first, and the old ``<state dir>/references`` last. A task without one
(third-party corpora ship no solution) is graded without it: the transfer set is derived
from the task's text alone and only markers written in the tests' source are neutral.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from termgrade.core.atomic import atomic_write_text
from termgrade.core.settings import SETTINGS
from termgrade.task import Task
from termgrade.task.digest import REFERENCE_FILE, task_digest
from termgrade.task.paths import CONTAINER

REFERENCE_FORMAT = "1.0"
GRADER_RULES = 4
"""The generation of the grader's rules a reference run is recorded under. What a record
says (the footprint, which tests were attested, whether the task is attestable) depends
on the rules that ran it: raise this when they change what a reference run records, and
every record of an older generation is made anew (``grade`` and ``run`` run the
reference once first; ``verify`` records it), never used. 1: records before the field
(no ``grader_rules``); 2: runner scripts in ``/tests`` attested, ``/tests`` executable,
the image's ``PYTHONPATH`` kept, named inputs; 3: an image directory in the footprint
stands for itself alone, what changed in it is recorded path by path; 4: an image file
copied up unchanged is no change (not in the footprint), and every image file the tests
changed is recorded, asked-for paths included."""


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
    verifier_changes: list[str] | None = Field(
        None, description="The image's files changed while the reference's tests ran (its "
                          "program's and the tests' own changes); None: not recorded (a "
                          "record older than this field), so none is judged.")
    attested: bool = Field(
        True, description="Could the reference run be attested (every decision covered by "
                          "an attested pytest session)?")
    attest_reason: str | None = Field(
        None, description="Why the task is not attestable, when it is not.")
    grader_rules: int = Field(
        GRADER_RULES, description="The generation of the grader's rules the run was recorded under "
                       "(a record of an older generation than the grader's is made anew).")


def reference_dir() -> Path:
    """``TERMGRADE_REFERENCE_DIR``, else the user's cache (``$XDG_CACHE_HOME`` or
    ``~/.cache``) ``/termgrade/references``."""
    return SETTINGS.reference_dir


NOT_THE_SOLUTIONS = (CONTAINER.solution_dir, CONTAINER.tests_dir, CONTAINER.logs_dir,
                     CONTAINER.grader_dir, CONTAINER.grader_run_dir)
"""The grader's and the oracle's own paths (the oracle uploads ``solution/`` to
``/solution``): never part of what the reference solution made."""
LOADER_CACHES = (PurePosixPath("/etc/ld.so.cache"),)
"""Caches a loader rewrites on its own (``ldconfig``); bytecode caches are any path
through a ``__pycache__`` directory."""


def reference_footprint(paths: Iterable[str]) -> list[str]:
    """``paths`` less the grader's and the oracle's own (:data:`NOT_THE_SOLUTIONS`) and
    loader caches (:data:`LOADER_CACHES`, ``__pycache__``): what a recorded footprint
    keeps, so that no agent graded on the task has those carried for it."""
    kept = []
    for path in paths:
        pure = PurePosixPath(path)
        if "__pycache__" in pure.parts or pure in LOADER_CACHES or any(
                pure == own or own in pure.parents for own in NOT_THE_SOLUTIONS):
            continue
        kept.append(path)
    return kept


def _read(path: Path) -> ReferenceRecord | None:
    try:
        raw = json.loads(path.read_text())
        if isinstance(raw, dict):
            raw.setdefault("grader_rules", 1)  # a record from before the field
        return ReferenceRecord.model_validate(raw)
    except (OSError, ValueError):
        return None


def reference_for(task: Task) -> ReferenceRecord | None:
    """The recorded reference run of ``task``'s current content, or None: the one shipped
    in the task's folder (:data:`~termgrade.task.digest.REFERENCE_FILE`, from a published
    repo), else the one recorded in :func:`reference_dir`, else one an earlier TermGrade
    saved under ``<state dir>/references``. The same from any working directory (but the
    old place, which is the current directory's). A record of other content is never
    used."""
    digest = task_digest(task.paths.root)
    places = [task.paths.root / REFERENCE_FILE, reference_dir() / f"{digest}.json",
              *(old / f"{digest}.json" for old in SETTINGS.legacy_reference_dirs)]
    for path in places:
        found = _read(path)
        if found is not None and found.task_digest == digest and current(found):
            return found
    return None


def current(record: ReferenceRecord) -> bool:
    """Was ``record`` made under this grader's rules (:data:`GRADER_RULES`)? An older one
    may say a task is unattested, or miss a footprint, that this grader would not."""
    return record.grader_rules >= GRADER_RULES


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
