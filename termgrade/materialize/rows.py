"""Finding one task's row: in a parquet file, a staged repo directory, or a Hub dataset repo.

Only the columns materializing needs are read (``task_id``, ``archive``,
``archive_sha256``, ``files``), filtered on ``task_id``. A Hub repo is read through
``huggingface_hub`` (``HF_ENDPOINT`` / ``endpoint`` and the usual cache): its
``data/tasks/*.parquet`` files are downloaded one at a time until the task is found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from termgrade.materialize.errors import MaterializeError
from termgrade.task.digest import FileEntry

COLUMNS = ["task_id", "archive", "archive_sha256", "files", "reference_json"]
OPTIONAL = ("archive_sha256", "reference_json")
"""Columns older repos lack."""
TASKS_DIR = "data/tasks"
"""Where a staged or published environments repo keeps its ``tasks`` config."""
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


@dataclass(frozen=True)
class TaskArchiveRow:
    task_id: str
    archive: bytes
    archive_sha256: str | None
    files: list[FileEntry]
    source: str
    """Where the row was read (file path or ``repo@revision:path``)."""
    reference_json: str | None = None
    """The reference solution's recorded run the row ships (written beside the task)."""


def _row_from(table_row: dict[str, Any], source: str) -> TaskArchiveRow:
    try:
        files = [FileEntry(path=str(f["path"]), size=int(f["size"]), sha256=str(f["sha256"]),
                           mode=int(f["mode"])) for f in table_row["files"] or []]
        archive = table_row["archive"]
        if not isinstance(archive, bytes):
            raise TypeError(f"archive is {type(archive).__name__}, not bytes")
    except (KeyError, TypeError, ValueError) as exc:
        raise MaterializeError(f"{source}: malformed row for {table_row.get('task_id')!r} "
                               f"({exc})", fix="rebuild the repo with `termgrade build`") from exc
    return TaskArchiveRow(str(table_row["task_id"]), archive, table_row.get("archive_sha256"),
                          files, source, table_row.get("reference_json"))


def find_in_parquet(path: Path, task_id: str) -> TaskArchiveRow | None:
    try:
        return _find_in_parquet(path, task_id)
    except (pa.ArrowException, OSError) as exc:
        # An empty, truncated or non-parquet file: say which, not pyarrow's traceback.
        raise MaterializeError(f"{path}: not a readable parquet file ({exc})",
                               fix="download or rebuild it (`termgrade build`), or point at "
                                   "another tasks parquet file") from exc


def _find_in_parquet(path: Path, task_id: str) -> TaskArchiveRow | None:
    schema = pq.read_schema(path)
    missing = [c for c in COLUMNS if c not in schema.names and c not in OPTIONAL]
    if missing:
        raise MaterializeError(f"{path}: no column(s) {', '.join(missing)}; not a tasks table",
                               fix="point at data/tasks/*.parquet of an environments repo")
    columns = [c for c in COLUMNS if c in schema.names]
    rows = pq.read_table(path, columns=columns, filters=[("task_id", "=", task_id)]).to_pylist()
    if len(rows) > 1:
        raise MaterializeError(f"{path}: {len(rows)} rows for task {task_id!r}",
                               fix="task ids must be unique; rebuild the repo")
    return _row_from(rows[0], str(path)) if rows else None


def local_parquet_files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    tasks = sorted((source / TASKS_DIR).glob("*.parquet"))
    return tasks or sorted(source.rglob("*.parquet"))


def find_row(source: str, task_id: str, *, revision: str | None = None,
             endpoint: str | None = None, token: str | None = None) -> TaskArchiveRow:
    """The row of ``task_id`` in a local parquet file / directory, or a Hub dataset repo."""
    local = Path(source)
    if local.exists():
        files = local_parquet_files(local)
        where = str(local)
    elif REPO_ID.match(source):
        return _find_on_hub(source, task_id, revision, endpoint, token)
    else:
        raise MaterializeError(f"{source}: no such file or directory, and not a repo id",
                               fix="pass a parquet file, a staged repo dir or namespace/name")
    for path in files:
        row = find_in_parquet(path, task_id)
        if row is not None:
            return row
    raise MaterializeError(f"task {task_id!r} not found in {where} ({len(files)} parquet file(s))",
                           fix="check the task id (the task_id column)")


def _find_on_hub(repo_id: str, task_id: str, revision: str | None, endpoint: str | None,
                 token: str | None) -> TaskArchiveRow:
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=endpoint, token=token)
    try:
        sha = api.repo_info(repo_id, repo_type="dataset", revision=revision).sha
        listing = api.list_repo_tree(repo_id, TASKS_DIR, recursive=True, revision=sha,
                                     repo_type="dataset")
        names = sorted(f.path for f in listing
                       if isinstance(f, RepoFile) and f.path.endswith(".parquet"))
        for name in names:
            local = hf_hub_download(repo_id, name, repo_type="dataset", revision=sha,
                                    endpoint=endpoint, token=token)
            row = find_in_parquet(Path(local), task_id)
            if row is not None:
                return replace(row, source=f"{repo_id}@{sha}:{name}")  # reference kept
    except HfHubHTTPError as exc:
        raise MaterializeError(f"{repo_id}: cannot read the dataset repo ({exc})",
                               fix="check the repo id, revision, HF_ENDPOINT and token") from exc
    raise MaterializeError(f"task {task_id!r} not found in {repo_id} ({len(names)} file(s) "
                           f"under {TASKS_DIR}/)", fix="check the task id and --revision")
