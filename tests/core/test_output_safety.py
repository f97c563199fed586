"""Writing outputs: never replace a device or a directory, and name the path on failure."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termgrade.cli.app import app
from termgrade.core.atomic import atomic_write_text
from termgrade.core.errors import OutputError
from termgrade.validate import validate_repo


def test_a_device_is_never_replaced() -> None:
    before = os.stat("/dev/full")
    with pytest.raises(OutputError, match="not a regular file"):
        atomic_write_text(Path("/dev/full"), "x")
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_a_directory_is_never_replaced(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="a directory"):
        atomic_write_text(tmp_path, "x")
    assert tmp_path.is_dir()


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_unwritable_targets_name_the_path(tmp_path: Path, where: str) -> None:
    if where == "under-a-file":
        (tmp_path / "plain").write_text("x")
        target = tmp_path / "plain" / "out.jsonl"
    else:
        target = Path("/proc/termgrade-out.jsonl")
    with pytest.raises(OutputError) as caught:
        atomic_write_text(target, "x")
    assert str(target.parent) in str(caught.value) and "fix:" in str(caught.value)


def test_a_symlink_to_a_file_writes_the_file(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    atomic_write_text(tmp_path / "link.txt", "new")
    assert (tmp_path / "real.txt").read_text() == "new"
    assert (tmp_path / "link.txt").is_symlink()


def test_the_cli_reports_an_unwritable_output_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    result = CliRunner().invoke(app, ["schemas", "--dir", str(tmp_path / "plain" / "sub")])
    assert result.exit_code == 1
    assert "cannot write" in result.output and "Traceback" not in result.output


def test_validate_refuses_a_directory_that_is_not_a_repo(tmp_path: Path) -> None:
    report = validate_repo(tmp_path)
    assert len(report.findings) == 1 and "not a staged repo" in report.findings[0].message
