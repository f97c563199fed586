"""The bandcentral repo's rows -> verl's RL parquet (train and validation) for a run.

The repo (a staged directory or a Hub dataset id) holds ``data/tasks/{train,validation}-*
.parquet``: one row per selected task with its instruction, base pass rate and the exact
task archive. Each task is unpacked into the run (the safe, manifest-checked unpacker of
:mod:`termgrade.materialize`), and its prompt row names what the agent loop needs:

* ``data_source``, ``ability``, ``prompt`` (the scaffold's system prompt, the
  instruction), ``reward_model`` (``rule``, the task id: the task's own verifier);
* ``agent_name``: the bash agent loop (:data:`termgrade.training.recipe.AGENT_NAME`);
* ``extra_info``: ``split``, ``index``, ``task_id``, ``task_dir`` and ``tests_dir``
  (relative to the run directory, which launch.sh exports as ``TERMGRADE_RUN_DIR``, so
  the run can move to the node), ``image`` (the tag the grader builds),
  ``archive_sha256``, ``base_pass_rate``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from termgrade.atomic import atomic_write_bytes
from termgrade.errors import BuildError
from termgrade.materialize import find_row, unpack_row
from termgrade.progress import track
from termgrade.task import load_task
from termgrade.training.paths import RunPaths
from termgrade.training.prompts import ABILITY, BASH_SYSTEM_PROMPT, DATA_SOURCE, REWARD_STYLE
from termgrade.training.recipe import AGENT_NAME

SPLITS = ("train", "validation")
TASKS_CONFIG = "data/tasks"
COLUMNS = ["task_id", "instruction", "base_pass_rate", "archive_sha256"]


@dataclass(frozen=True)
class SplitData:
    split: str
    rows: list[dict[str, Any]]

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
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(source, repo_type="dataset", revision=revision,
                                  allow_patterns=[f"{TASKS_CONFIG}/*.parquet", "README.md"]))


def split_files(repo: Path, split: str) -> list[Path]:
    files = sorted((repo / TASKS_CONFIG).glob(f"{split}-*.parquet"))
    if not files:
        raise BuildError(f"{repo / TASKS_CONFIG}: no {split}-*.parquet",
                         fix="point --repo at a bandcentral repo (termgrade build bandcentral)")
    return files


def _read_rows(files: Sequence[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in files:
        try:
            names = pq.read_schema(path).names
            missing = [c for c in COLUMNS if c not in names]
            if not missing:
                rows += pq.read_table(path, columns=COLUMNS).to_pylist()
        except (pa.ArrowException, OSError) as exc:
            # An empty, truncated or non-parquet file: say which, not pyarrow's traceback.
            raise BuildError(f"{path}: not a readable parquet file ({exc})",
                             fix="download the repo again, or rebuild it with "
                                 "`termgrade build bandcentral`") from exc
        if missing:
            raise BuildError(f"{path}: no column(s) {', '.join(missing)}",
                             fix="rebuild the repo with `termgrade build bandcentral`")
    return rows


def prompt_row(task: dict[str, Any], *, split: str, index: int, task_dir: Path,
               image: str) -> dict[str, Any]:
    """One verl prompt row (see the module docstring)."""
    return {
        "data_source": DATA_SOURCE,
        "agent_name": AGENT_NAME,
        "prompt": [{"role": "system", "content": BASH_SYSTEM_PROMPT},
                   {"role": "user", "content": str(task["instruction"]).strip()}],
        "ability": ABILITY,
        "reward_model": {"style": REWARD_STYLE, "ground_truth": str(task["task_id"])},
        "extra_info": {
            "split": split,
            "index": index,
            "task_id": str(task["task_id"]),
            "task_dir": str(task_dir),
            "tests_dir": str(task_dir / "tests"),
            "image": image,
            "archive_sha256": task.get("archive_sha256"),
            "base_pass_rate": task.get("base_pass_rate"),
        },
    }


def prepare_split(repo: Path, paths: RunPaths, split: str) -> SplitData:
    """Unpack the split's tasks into the run and build its prompt rows."""
    tasks = _read_rows(split_files(repo, split))
    rows = []
    with track(f"{split}: unpacking tasks", len(tasks)) as progress:
        for index, task in enumerate(tasks):
            task_id = str(task["task_id"])
            target = paths.task_dir(task_id)
            if not target.exists():
                unpack_row(find_row(str(repo), task_id), target)
            loaded = load_task(target)
            rows.append(prompt_row(task, split=split, index=index,
                                   task_dir=target.relative_to(paths.root),
                                   image=loaded.image_tag))
            progress.advance()
    return SplitData(split, rows)


def write_split(path: Path, data: SplitData) -> None:
    """The rows as one parquet file, written atomically."""
    table = pa.Table.from_pylist(data.rows)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    atomic_write_bytes(path, sink.getvalue())


def read_split(path: Path) -> list[dict[str, Any]]:
    return list(pq.read_table(path).to_pylist())
