"""A trial's kept work: what of the agent's work reached the scoring container, as a record.

``termgrade grade --keep-work`` keeps, for every trial, the entries the grader carried into
the scoring container B (the task's transfer set as the review let it through): a
:class:`KeptWork` manifest per trial in ``DIR/work/trials/<trial_id>.json``, and each
regular file's bytes once, by their sha256, in ``DIR/work/blobs/`` (content-addressed: a
file two trials wrote alike is stored once). ``termgrade regrade`` rebuilds the layer from
them and scores it again against changed tests (:mod:`termgrade.grade.regrade`).

A manifest whose work was over the bound is written too, with ``regradable`` false and
the reason: that trial must be rerun, and says so.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from termgrade.records.version import RecordFormat

KEPT_WORK_SCHEMA_VERSION = "1.0"
KEPT_WORK_FORMAT = RecordFormat(schema="kept_work", version=KEPT_WORK_SCHEMA_VERSION,
                                writer="termgrade grade --keep-work")
WORK_DIR = "work"
"""The kept work's folder inside a grading run's output folder."""

EntryKind = Literal["file", "dir", "symlink", "whiteout"]


class KeptEntry(BaseModel):
    """One entry of the carried layer, parents before children."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Absolute path in the container.")
    kind: EntryKind = Field(description="file, dir, symlink, or whiteout (a deletion of "
                            "what the image had there).")
    mode: int = Field(0, ge=0, le=0o7777,
                      description="Permission bits (and setuid/setgid/sticky).")
    uid: int = Field(0, ge=0, le=2**32 - 2)
    gid: int = Field(0, ge=0, le=2**32 - 2)
    mtime_ns: int = Field(0, description="Modification time, nanoseconds.")
    size: int = Field(0, ge=0, description="A file's size in bytes.")
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$",
                               description="A file's content digest: its blob's name.")
    link_to: str | None = Field(None, description="A file that is a hard link of an earlier "
                                "entry: that entry's path.")
    target: str | None = Field(None, description="A symlink's target, as written.")
    opaque: bool = Field(False, description="A directory the agent removed and made anew: "
                         "nothing of the image's shows through it.")


class KeptWork(BaseModel):
    """What reached the scoring container of one trial, or why it was not kept."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Annotated[str, KEPT_WORK_FORMAT] = Field(
        KEPT_WORK_SCHEMA_VERSION, description="Format version.")
    trial_id: str = Field(description="The trial whose work this is.")
    task_id: str = Field(description="The task graded.")
    task_digest: str | None = Field(None, description="sha256 of the task's files as graded.")
    agent_side_digest: str | None = Field(
        None, description="sha256 of what the agent saw and acted in: the task's files "
        "outside tests/ and solution/ (instruction, environment, task.toml). A regrade "
        "against a task whose digest differs must rerun the agent instead.")
    regradable: bool = Field(description="The work was kept whole; false: see reason.")
    reason: str | None = Field(None, description="Why the work was not kept (over the "
                               "bound, unreadable): the trial must be rerun.")
    entries: list[KeptEntry] = Field(default_factory=list,
                                     description="The carried entries, parents first.")
    files: int = Field(0, ge=0, description="Regular files kept.")
    bytes: int = Field(0, ge=0, description="Their total size (before deduplication).")


_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


def trial_file_name(trial_id: str) -> str:
    """The manifest's file name: the trial id, or its sha256 where the id would not make a
    plain file name."""
    if _SAFE.match(trial_id):
        return f"{trial_id}.json"
    return f"{hashlib.sha256(trial_id.encode()).hexdigest()}.json"
