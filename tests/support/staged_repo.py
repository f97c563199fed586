"""A small staged environments repo (two tasks) for the validate tests, and helpers to
damage it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from termgrade.builders.environments import build_environments
from termgrade.validate import ValidationFinding

TASKS = "data/tasks/unseen-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    for name in ("alpha", "bravo"):
        task = root / "tasks" / name
        for sub in ("environment", "solution", "tests"):
            (task / sub).mkdir(parents=True)
        (task / "task.toml").write_text('schema_version = "1.4"\n[metadata]\ndomain = "d"\n')
        (task / "instruction.md").write_text(f"Do {name}.\n")
        (task / "environment" / "Dockerfile").write_text("FROM termgrade/base:local\n")
        (task / "solution" / "solve.sh").write_text("echo hi\n")
        (task / "tests" / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
    out = root / "repo"
    build_environments(out, task_roots=[root / "tasks"])
    return out


@pytest.fixture
def repo(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(pristine, copy)
    return copy


def rewrite(path: Path, change: Callable[[list[dict[str, Any]]], None],
            schema: pa.Schema | None = None) -> None:
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema or table.schema), path)


def only(findings: list[ValidationFinding], check: str) -> list[ValidationFinding]:
    return [f for f in findings if f.check == check]
