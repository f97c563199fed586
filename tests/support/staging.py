"""Test stand-in: a small environments repo staged by hand, in the shared layout, for tests
and rehearsals.

It follows the contract between ``termgrade build`` and ``termgrade publish`` (README with
``configs:``, ``data/tasks/<split>-00000-of-00001.parquet``, ``data/labels/...``,
``labels.jsonl``, ``tasks/<task_id>/``) with just enough columns for ``datasets`` and
``materialize``; ``termgrade build`` makes the real thing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from termgrade.task.archive import pack_task
from termgrade.task.digest import iter_task_files, task_manifest

FILE_STRUCT = pa.struct([("path", pa.string()), ("size", pa.int64()), ("sha256", pa.string()),
                         ("mode", pa.int32())])
TASK_SCHEMA = pa.schema([
    ("task_id", pa.string()), ("instruction", pa.large_string()), ("domain", pa.string()),
    ("difficulty", pa.string()), ("metadata_json", pa.string()),
    ("task_toml", pa.large_string()), ("oracle_verified", pa.bool_()), ("verdict", pa.string()),
    ("n_assertions", pa.int32()), ("split", pa.string()), ("files", pa.list_(FILE_STRUCT)),
    ("archive", pa.large_binary()), ("archive_sha256", pa.string()),
])

CARD = """---
configs:
- config_name: tasks
  default: true
  data_files:
{task_files}
- config_name: labels
  data_files:
  - split: train
    path: data/labels/labels-*.parquet
---
# {title}

Staged by tests.support.staging.
"""


def task_row(task_dir: Path, split: str = "unseen") -> dict[str, Any]:
    """The ``tasks`` row of one task directory (archive and manifest exact)."""
    toml_text = (task_dir / "task.toml").read_text(encoding="utf-8")
    metadata = tomllib.loads(toml_text).get("metadata", {})
    archive = pack_task(task_dir)
    return {
        "task_id": task_dir.name,
        "instruction": (task_dir / "instruction.md").read_text(encoding="utf-8"),
        "domain": str(metadata.get("domain", "")),
        "difficulty": str(metadata.get("difficulty", "")),
        "metadata_json": json.dumps(metadata, sort_keys=True), "task_toml": toml_text,
        "oracle_verified": False, "verdict": None, "n_assertions": None, "split": split,
        "files": [{"path": e.path, "size": e.size, "sha256": e.sha256, "mode": e.mode}
                  for e in task_manifest(task_dir)],
        "archive": archive, "archive_sha256": hashlib.sha256(archive).hexdigest(),
    }


def write_task_parquet(rows: list[dict[str, Any]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=TASK_SCHEMA), path)
    return path


def stage_environments_repo(root: Path, task_dirs: dict[str, list[Path]],
                            labels: list[dict[str, Any]] | None = None,
                            title: str = "termgrade-environments") -> Path:
    """Write a staged repo at ``root`` from ``{split: [task dirs]}``."""
    root.mkdir(parents=True, exist_ok=True)
    globs = []
    for split, dirs in task_dirs.items():
        write_task_parquet([task_row(d, split) for d in dirs],
                           root / "data" / "tasks" / f"{split}-00000-of-00001.parquet")
        globs.append(f"  - split: {split}\n    path: data/tasks/{split}-*.parquet")
        for task_dir in dirs:
            for path in iter_task_files(task_dir):
                out = root / "tasks" / task_dir.name / path.relative_to(task_dir)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, out)
    labels = labels if labels is not None else [
        {"task_id": d.name, "model": "oracle", "pass_rate": 1.0, "band": "easy"}
        for dirs in task_dirs.values() for d in dirs]
    (root / "data" / "labels").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(labels), root / "data/labels/labels-00000-of-00001.parquet")
    (root / "labels.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n"
                                               for r in labels))
    (root / "README.md").write_text(CARD.format(task_files="\n".join(globs), title=title))
    return root
