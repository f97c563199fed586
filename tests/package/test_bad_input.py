"""No traceback reaches a user for a bad input: each command the user typed exits 1 with
one error naming the input and the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.cli import app
from tests.support.task_dirs import MakeTask

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def said(result: object) -> str:
    """The command's output with the console's line wrapping undone."""
    return " ".join(str(getattr(result, "output", "")).split())


@pytest.fixture(params=["name", "link"])
def odd_task(request: pytest.FixtureRequest, make_task: MakeTask) -> tuple[Path, str]:
    """A task with a file name that is not UTF-8, or with a symlink."""
    task = make_task("alpha")
    if request.param == "name":
        with open(os.fsencode(task / "environment") + b"/bad\xff.txt", "wb") as handle:
            handle.write(b"x")
        return task, "environment/bad\\xff.txt: file name is not valid UTF-8"
    (task / "environment" / "link").symlink_to("/etc/passwd")
    return task, "environment/link: is a symlink"


def test_build_environments_names_the_odd_file(odd_task: tuple[Path, str],
                                               tmp_path: Path) -> None:
    task, expected = odd_task
    done = runner.invoke(app, ["build", "environments", "-t", str(task.parent),
                               "-o", str(tmp_path / "out")])
    assert done.exit_code == 1
    assert expected in said(done) and "fix:" in said(done)
    assert done.exception is None or isinstance(done.exception, SystemExit)


def test_audit_flags_the_odd_file(odd_task: tuple[Path, str]) -> None:
    task, _ = odd_task
    done = runner.invoke(app, ["audit", str(task.parent)])
    assert "task_loads 1" in said(done)
    assert "passing: 0" in said(done)


def test_verify_names_the_odd_file(odd_task: tuple[Path, str], tmp_path: Path) -> None:
    """verify refuses the task before any container starts: its row says why."""
    task, expected = odd_task
    done = runner.invoke(app, ["verify", str(task.parent), "-o", str(tmp_path / "v.jsonl")])
    assert (tmp_path / "v.jsonl").read_text().count(expected.split(": ")[1]) == 1
    assert done.exception is None or isinstance(done.exception, SystemExit)


@pytest.mark.parametrize("content", [b"", b"not a parquet file\n"])
def test_materialize_names_an_empty_or_corrupt_parquet(tmp_path: Path, content: bytes) -> None:
    parquet = tmp_path / "tasks.parquet"
    parquet.write_bytes(content)
    done = runner.invoke(app, ["materialize", str(parquet), "alpha", "--to",
                               str(tmp_path / "alpha")])
    assert done.exit_code == 1
    assert f"{parquet}: not a readable parquet file" in said(done) and "fix:" in said(done)
    assert not (tmp_path / "alpha").exists()


@pytest.mark.parametrize("content", [b"", b"not a parquet file\n"])
def test_train_prepare_names_an_empty_or_corrupt_parquet(tmp_path: Path,
                                                          content: bytes) -> None:
    parquet = tmp_path / "repo" / "data" / "tasks" / "train-00000-of-00001.parquet"
    parquet.parent.mkdir(parents=True)
    parquet.write_bytes(content)
    done = runner.invoke(app, ["train", "prepare", "--repo", str(tmp_path / "repo"),
                               "-o", str(tmp_path / "run")])
    assert done.exit_code == 1
    assert f"{parquet}: not a readable parquet file" in said(done) and "fix:" in said(done)


@pytest.mark.slow
@pytest.mark.parametrize(("submodule", "name", "function"), [
    ("termgrade.materialize", "ArchiveLimits", "materialize"),
    ("termgrade.publish", "PublishOptions", "publish"),
])
def test_top_level_names_stay_callable_whatever_submodule_is_imported(
        submodule: str, name: str, function: str, tmp_path: Path) -> None:
    """`from termgrade.materialize import ArchiveLimits` binds the subpackage over the
    lazy export: `tg.materialize(...)` still calls the function (a fresh interpreter)."""
    code = (f"from {submodule} import {name}\n"
            "import termgrade as tg\n"
            f"import {submodule}.{'rows' if function == 'materialize' else 'validation'}\n"
            f"tg.{function}({str(tmp_path / 'nowhere')!r}, "
            + ("'alpha', 'out')" if function == "materialize" else
               "tg.PublishOptions(repo_id='org/x'))"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    assert "not callable" not in done.stderr
    assert "nowhere" in done.stderr  # the function ran, and named its bad input
