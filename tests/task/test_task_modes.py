"""The mode record of a staged task (``.termgrade-modes.json``): a download's modes take
the recorded ones, a mode set on purpose counts, a broken record is named."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from termgrade.task.digest import (
    MODES_FILE,
    as_downloaded,
    read_tree,
    restore_modes,
    task_digest,
    write_modes,
)
from termgrade.task.errors import TaskLoadError
from tests.support.task_dirs import MakeTask


def test_which_modes_a_download_writes() -> None:
    assert as_downloaded(0o644, False) and as_downloaded(0o664, False)
    assert as_downloaded(0o600, False) and as_downloaded(0o755, True)
    assert not as_downloaded(0o755, False)  # an executable file was made so on purpose
    assert not as_downloaded(0o700 | stat.S_ISUID, False)
    assert not as_downloaded(0o444, False)  # read-only: set on purpose
    assert not as_downloaded(0o555, True)


def _staged(make_task: MakeTask, tmp_path: Path) -> tuple[Path, str]:
    root = make_task("alpha")
    (root / "solution" / "solve.sh").chmod(0o755)
    digest = task_digest(root)
    write_modes(root, read_tree(root))
    return root, digest


def test_the_record_stands_for_lost_modes_only(make_task: MakeTask, tmp_path: Path) -> None:
    root, digest = _staged(make_task, tmp_path)
    solve = root / "solution" / "solve.sh"
    assert task_digest(root) == digest  # the record itself is not part of the task
    solve.chmod(0o644)  # as downloaded
    assert task_digest(root) == digest
    solve.chmod(0o700)  # changed on purpose: the task changed
    assert task_digest(root) != digest
    assert restore_modes(root) == 0 and stat.S_IMODE(solve.stat().st_mode) == 0o700
    solve.chmod(0o644)
    assert restore_modes(root) == 1 and stat.S_IMODE(solve.stat().st_mode) == 0o755


def test_a_broken_record_is_named_with_its_fix(make_task: MakeTask, tmp_path: Path) -> None:
    root, _ = _staged(make_task, tmp_path)
    (root / MODES_FILE).write_text('{"schema_version": 1, "files": {"x": "9z"}, "dirs": {}}')
    with pytest.raises(TaskLoadError, match="unreadable mode record") as caught:
        task_digest(root)
    assert MODES_FILE in str(caught.value) and "rebuild the repo" in str(caught.value)
