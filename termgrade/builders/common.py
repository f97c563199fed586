"""Staging a repo: build into a temp dir beside the target, rename it into place at the end.

Nothing half-written is ever left at the target: an error (or Ctrl-C) removes the staging
dir, and an existing target is only replaced after the new one is complete.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from termgrade.builders.errors import BuildError
from termgrade.builders.layout import RepoPaths
from termgrade.core.atomic import atomic_write_bytes
from termgrade.core.errors import output_error


@contextmanager
def staged_directory(target: Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty staging dir; on success it becomes ``target`` (atomically renamed)."""
    target = Path(target).resolve()
    if target.exists() and not overwrite:
        raise BuildError(f"{target} already exists", fix="pass --force to replace it")
    if target.exists() and not target.is_dir():
        raise BuildError(f"{target} is not a directory", fix="choose another output path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".staging",
                                      dir=target.parent))
        stage.chmod(0o755)
    except OSError as exc:
        raise output_error(target, exc) from exc
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    old = None
    try:
        if target.exists():
            old = target.with_name(f".{target.name}.{os.getpid()}.old")
            os.replace(target, old)
        os.replace(stage, target)
    except OSError as exc:
        shutil.rmtree(stage, ignore_errors=True)
        raise output_error(target, exc) from exc
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def copy_tree(source: Path, dest: Path, files: list[Path]) -> None:
    """Copy ``files`` (under ``source``) to ``dest`` keeping relative paths and modes."""
    for path in files:
        out = dest / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
        os.chmod(out, path.stat().st_mode & 0o7777)


def place_secrets_baseline(out: Path, task_roots: Sequence[Path],
                           secrets_baseline: Path | None) -> Path | None:
    """Copy the reviewed detect-secrets findings of the task files beside the staged repo
    at ``out`` (where ``validate`` and ``publish`` look for them): ``secrets_baseline``, else
    ``secrets.baseline`` in the first task root when there is one. Returns where it went."""
    baseline = secrets_baseline or (Path(task_roots[0]) / "secrets.baseline"
                                    if task_roots else None)
    if baseline is not None and baseline.is_file():
        placed = RepoPaths(Path(out)).secrets_baseline
        atomic_write_bytes(placed, baseline.read_bytes())
        return placed
    if secrets_baseline is not None:
        raise BuildError(f"{secrets_baseline}: no such secrets baseline",
                         fix="pass the reviewed detect-secrets baseline file, or omit it")
    return None
