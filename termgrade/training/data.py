"""The bandcentral repo's rows -> verl's RL parquet (train and validation) for a run.

The repo (a staged directory or a Hub dataset id) holds ``data/tasks/{train,validation}-*
.parquet``: one row per selected task with its instruction, base pass rate and the exact
task archive. Each task is unpacked into the run (the safe, manifest-checked unpacker of
:mod:`termgrade.materialize`), and its prompt row (built by
:func:`termgrade.builders.verl_prompts.verl_prompt_row`, as the repo's own ``verl`` rows are)
names what the agent loop needs:

* ``data_source``, ``ability``, ``prompt`` (the scaffold's system prompt, the
  instruction), ``reward_model`` (``rule``, the task id: the task's own verifier);
* ``agent_name``: the bash agent loop (:data:`termgrade.builders.verl_prompts.AGENT_NAME`);
* ``extra_info``: ``split``, ``index``, ``task_id``, ``task_dir`` and ``tests_dir``
  (relative to the run directory, which launch.sh exports as ``TERMGRADE_RUN_DIR``, so
  the run can move to the node), ``image`` (the tag the grader builds),
  ``archive_sha256``, ``base_pass_rate``, ``domain``, ``difficulty``.

Unattested tasks (:func:`termgrade.audit.attestable.attestability`: graded by test.sh's
own reward, which the grader cannot attest) get no prompt row unless
``include_unattested``; :attr:`SplitData.unattested` names them either way.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from termgrade.audit.attestable import attestability
from termgrade.builders.errors import BuildError
from termgrade.builders.row_buffer import rows_to_table
from termgrade.builders.rows import schema_for
from termgrade.builders.verl_prompts import VerlPromptRow, task_dir_for, verl_prompt_row
from termgrade.core.atomic import atomic_write_bytes
from termgrade.core.progress import track
from termgrade.materialize import find_row, unpack_row
from termgrade.task import load_task
from termgrade.training.paths import RunPaths

SPLITS = ("train", "validation")
TASKS_CONFIG = "data/tasks"
COLUMNS = ["task_id", "instruction", "base_pass_rate", "archive_sha256"]
OPTIONAL = ["domain", "difficulty"]


@dataclass(frozen=True)
class SplitData:
    split: str
    rows: list[dict[str, Any]]
    unattested: dict[str, str] = field(default_factory=dict)
    """Unattestable tasks of the split: task id -> why (left out unless included)."""

    @property
    def task_ids(self) -> list[str]:
        return [str(r["extra_info"]["task_id"]) for r in self.rows]

    @property
    def base_pass_rates(self) -> list[float | None]:
        return [r["extra_info"]["base_pass_rate"] for r in self.rows]


def local_repo(source: str, *, revision: str | None = None) -> Path:
    """A local copy of the bandcentral repo: the directory itself, or the Hub repo's
    ``data/tasks`` files (huggingface_hub's cache; ``HF_ENDPOINT`` is honoured)."""
    path = Path(source)
    if path.is_dir():
        return path
    if path.exists():
        raise BuildError(f"{source}: not a directory",
                         fix="pass the bandcentral repo's directory or its Hub id (org/name)")
    from termgrade.materialize.rows import REPO_ID

    if not REPO_ID.match(source):
        raise BuildError(f"{source}: no such directory, and not a Hub repo id",
                         fix="pass the bandcentral repo's directory or its Hub id (org/name)")
    return _download(source, revision)


def _download(source: str, revision: str | None) -> Path:
    """``source``'s tasks and card from the Hub; each way the Hub says no is a BuildError
    naming the repo, the Hub asked and the fix, never the client's raw HTTP error."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"the Hub at {constants.ENDPOINT}"
    try:
        return Path(snapshot_download(source, repo_type="dataset", revision=revision,
                                      allow_patterns=[f"{TASKS_CONFIG}/*.parquet",
                                                      "README.md"]))
    except GatedRepoError:
        raise BuildError(f"--repo {source}: a gated dataset repo on {where}, and this token "
                         "has not been granted access",
                         fix="accept its terms on the repo's page, then log in (`hf auth "
                         "login` or HF_TOKEN)") from None
    except RepositoryNotFoundError:
        raise BuildError(f"--repo {source}: {where} has no dataset repo {source} (or it is "
                         "private and no token with access is set)",
                         fix="check the id (ORG/NAME, as `termgrade publish --repo-id` "
                         "gave it), log in for a private repo (`hf auth login` or HF_TOKEN), "
                         "or pass the staged directory (e.g. dist/bandcentral)") from None
    except RevisionNotFoundError:
        raise BuildError(f"--repo {source}: {where} has no revision {revision!r} of it",
                         fix="pass a branch, tag or commit the repo has, or drop --revision"
                         ) from None
    except LocalEntryNotFoundError as exc:
        raise BuildError(f"--repo {source}: {where} cannot be reached and nothing is cached "
                         f"({exc})", fix="check the network, HF_ENDPOINT and HF_HUB_OFFLINE, "
                         "or pass the staged directory") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BuildError(f"--repo {source}: {where} answered HTTP {status} ({first})",
                         fix="try again later, or pass the staged directory") from None


def split_files(repo: Path, split: str) -> list[Path]:
    files = sorted((repo / TASKS_CONFIG).glob(f"{split}-*.parquet"))
    if not files:
        raise BuildError(f"{repo / TASKS_CONFIG}: no {split}-*.parquet",
                         fix="point --repo at a bandcentral repo (termgrade build bandcentral)")
    return files


def _read_table(path: Path, columns: Sequence[str], optional: Sequence[str] = ()
                ) -> list[dict[str, Any]]:
    """``columns`` (all needed) and those of ``optional`` the file has, as rows.
    BuildError names an unreadable file or a missing column, never pyarrow's traceback."""
    try:
        names = pq.read_schema(path).names
        missing = [c for c in columns if c not in names]
        if not missing:
            wanted = [*columns, *(c for c in optional if c in names)]
            return list(pq.read_table(path, columns=wanted).to_pylist())
    except (pa.ArrowException, OSError) as exc:
        # An empty, truncated or non-parquet file: say which.
        raise BuildError(f"{path}: not a readable parquet file ({exc})",
                         fix="download the repo again, or rebuild it with "
                             "`termgrade build bandcentral`") from exc
    raise BuildError(f"{path}: no column(s) {', '.join(missing)}",
                     fix="rebuild the repo with `termgrade build bandcentral`")


def _read_rows(files: Sequence[Path]) -> list[dict[str, Any]]:
    return [row for path in files for row in _read_table(path, COLUMNS, OPTIONAL)]


def read_tasks(repo: Path, split: str) -> list[dict[str, Any]]:
    """The split's task rows (the columns a run needs)."""
    return _read_rows(split_files(repo, split))


@dataclass(frozen=True)
class Identity:
    """The model and scaffold whose pass rates selected the repo's tasks."""

    model: str | None
    scaffold: str | None


def repo_identity(repo: Path) -> Identity:
    """``base_model`` / ``base_scaffold`` of the repo's task rows: one of each, or None when
    the repo was built without labels. Several are refused: a repo is selected for one."""
    found: set[tuple[str | None, str | None]] = set()
    for split in SPLITS:
        for path in split_files(repo, split):
            for row in _read_table(path, (), ("base_model", "base_scaffold")):
                found.add((row.get("base_model"), row.get("base_scaffold")))
    known = {pair for pair in found if pair[0] is not None}
    if len(known) > 1:
        raise BuildError(f"{repo / TASKS_CONFIG}: rows selected for "
                         + ", ".join(f"{m} / {s}" for m, s in sorted(known, key=str)),
                         fix="build the bandcentral repo for one model (`termgrade build "
                             "bandcentral --model ... --scaffold ...`)")
    model, scaffold = next(iter(known)) if known else (None, None)
    return Identity(model, scaffold)


def prompt_row(task: dict[str, Any], *, split: str, index: int) -> dict[str, Any]:
    """One verl prompt row (the bandcentral repo's ``verl`` row of the same task)."""
    return verl_prompt_row(
        task_id=str(task["task_id"]), instruction=str(task["instruction"]),
        archive_sha256=str(task["archive_sha256"]), split=split, index=index,
        base_pass_rate=task.get("base_pass_rate"), domain=task.get("domain"),
        difficulty=task.get("difficulty")).model_dump()


def prepare_split(repo: Path, paths: RunPaths, split: str, *,
                  include_unattested: bool = False) -> SplitData:
    """Unpack the split's tasks into the run and build its prompt rows (an unattested
    task's only with ``include_unattested``)."""
    tasks = read_tasks(repo, split)
    rows: list[dict[str, Any]] = []
    unattested: dict[str, str] = {}
    with track(f"{split}: unpacking tasks", len(tasks)) as progress:
        for task in tasks:
            task_id = str(task["task_id"])
            target = paths.root / task_dir_for(task_id)
            unpacked = not target.exists()
            if unpacked:
                unpack_row(find_row(str(repo), task_id), target)
            row = prompt_row(task, split=split, index=len(rows))
            loaded = load_task(target)
            if loaded.image_tag != row["extra_info"]["image"]:
                raise BuildError(f"{target}: loads as another task than {task_id}",
                                 fix="rebuild the repo with `termgrade build bandcentral`")
            verdict = attestability(loaded)
            if not verdict.attested:
                unattested[task_id] = verdict.reason or "unattestable"
                if not include_unattested:
                    if unpacked:
                        shutil.rmtree(target)
                    progress.advance()
                    continue
            rows.append(row)
            progress.advance()
    return SplitData(split, rows, unattested)


def write_split(path: Path, data: SplitData) -> None:
    """The rows as one parquet file of the verl row model's Arrow schema (the bandcentral
    repo's ``verl`` files' schema), written atomically."""
    table = rows_to_table(data.rows, schema_for(VerlPromptRow))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    atomic_write_bytes(path, sink.getvalue())


def read_split(path: Path) -> list[dict[str, Any]]:
    return list(pq.read_table(path).to_pylist())
