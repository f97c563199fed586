"""pack_task -> row -> materialize gives back the task byte for byte (modes included), from
a parquet file, a staged repo dir and a Hub repo; and the result runs."""

from __future__ import annotations

import filecmp
import os
import stat
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from termgrade.cli import materialize as materialize_cli
from termgrade.cli import run as run_cli
from termgrade.materialize import materialize
from termgrade.publish import PublishOptions, RetryPolicy, ValidationOutcome, publish
from termgrade.task.digest import task_manifest
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import HubServer
from tests.support.staging import stage_environments_repo, task_row, write_task_parquet

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
TASK = Path(__file__).resolve().parents[2] / "environments" / "word-frequency"


def assert_identical(a: Path, b: Path) -> None:
    """Same paths, same bytes, same modes (files and directories)."""
    def walk(root: Path) -> dict[str, int]:
        return {p.relative_to(root).as_posix(): stat.S_IMODE(p.lstat().st_mode)
                for p in root.rglob("*") if "__pycache__" not in p.parts}

    assert walk(a) == walk(b)
    for rel in walk(a):
        if (a / rel).is_file():
            assert filecmp.cmp(a / rel, b / rel, shallow=False), rel


@pytest.fixture
def odd_modes_task(tmp_path: Path) -> Path:
    """word-frequency plus a private dir and an executable data file, to prove modes."""
    root = tmp_path / "src" / "word-frequency"
    for path in sorted(TASK.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        out = root / path.relative_to(TASK)
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(path.read_bytes())
        out.chmod(stat.S_IMODE(path.stat().st_mode))
    (root / "environment" / "data" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "environment" / "data" / "run.sh").chmod(0o750)
    (root / "environment" / "data").chmod(0o700)
    return root


def test_from_a_parquet_file(tmp_path: Path, odd_modes_task: Path) -> None:
    parquet = write_task_parquet([task_row(odd_modes_task)], tmp_path / "t.parquet")
    result = materialize(parquet, "word-frequency", tmp_path / "out" / "word-frequency")
    assert_identical(odd_modes_task, result.path)
    assert result.n_files == len(task_manifest(odd_modes_task)) == 8
    assert os.listdir(tmp_path / "out") == ["word-frequency"]


def test_from_a_staged_repo_dir(tmp_path: Path, odd_modes_task: Path) -> None:
    staged = stage_environments_repo(tmp_path / "dist", {"unseen": [odd_modes_task]})
    result = materialize(staged, "word-frequency", tmp_path / "out")
    assert_identical(odd_modes_task, result.path)


def test_from_a_hub_repo(tmp_path: Path, odd_modes_task: Path, hub: HubServer) -> None:  # noqa: F811
    staged = stage_environments_repo(tmp_path / "dist", {"heldout120": [odd_modes_task]})
    publish(staged, PublishOptions(repo_id="org/envs", endpoint=hub.url, token="hf_dummy",
                                   state_dir=tmp_path / "state", retry=RetryPolicy(base_s=0.01)),
            validator=lambda root: ValidationOutcome(True))
    result = materialize("org/envs", "word-frequency", tmp_path / "out", endpoint=hub.url)
    assert_identical(odd_modes_task, result.path)
    assert result.source.startswith("org/envs@")


def make_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    materialize_cli.register(app)
    run_cli.register(app)
    return app


def test_cli_materializes_and_names_an_unknown_task(tmp_path: Path) -> None:
    parquet = write_task_parquet([task_row(TASK)], tmp_path / "t.parquet")
    app = make_app()
    runner = CliRunner()
    ok = runner.invoke(app, ["materialize", str(parquet), "word-frequency", "--to",
                             str(tmp_path / "wf")])
    assert ok.exit_code == 0, ok.output
    assert f"word-frequency: {len(task_manifest(TASK))} files" in ok.stdout
    # --to is a location: the task keeps its id, its directory's name (issue 22).
    assert_identical(TASK, tmp_path / "wf" / "word-frequency")
    missing = runner.invoke(app, ["materialize", str(parquet), "nope", "--to",
                                  str(tmp_path / "x")])
    assert missing.exit_code == 1 and "task 'nope' not found" in missing.output
    assert "Traceback" not in missing.output and not (tmp_path / "x").exists()


@pytest.mark.docker
def test_materialized_task_passes_its_oracle_with_termgrade_run(tmp_path: Path) -> None:
    parquet = write_task_parquet([task_row(TASK)], tmp_path / "t.parquet")
    out = materialize(parquet, "word-frequency", tmp_path / "word-frequency").path
    result = CliRunner().invoke(make_app(), ["run", str(out), "--agent", "oracle"])
    assert result.exit_code == 0, result.output
    assert "reward: 1" in result.stdout
