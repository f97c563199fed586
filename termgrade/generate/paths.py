"""The layout of a generation run's output directory; no other module joins these.

::

    <out>/
    ├── journal.jsonl          # finished candidates (generation + verify), for --resume
    ├── candidates.jsonl       # every candidate's final record, audit included
    ├── funnel.json            # candidates -> parsed -> ... -> kept, with the share kept
    ├── funnel.png
    ├── history/<id>.json      # one candidate: prompts, answers, verdicts per round
    ├── work/<id>/             # the candidate's files of its last round (a task dir)
    └── kept/<id>/             # the tasks kept: verified and audit clean
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from termgrade.core.errors import OutputError
from termgrade.generate.answer import GeneratedTask, path_problem


@dataclass(frozen=True)
class GenerationPaths:
    root: Path

    @property
    def journal(self) -> Path:
        return self.root / "journal.jsonl"

    @property
    def candidates(self) -> Path:
        return self.root / "candidates.jsonl"

    @property
    def funnel_json(self) -> Path:
        return self.root / "funnel.json"

    @property
    def funnel_png(self) -> Path:
        return self.root / "funnel.png"

    @property
    def work_dir(self) -> Path:
        return self.root / "work"

    @property
    def kept_dir(self) -> Path:
        return self.root / "kept"

    def history(self, candidate_id: str) -> Path:
        return self.root / "history" / f"{candidate_id}.json"

    def task_dir(self, candidate_id: str) -> Path:
        return self.work_dir / candidate_id

    def kept(self, candidate_id: str) -> Path:
        return self.kept_dir / candidate_id


def write_task(task: GeneratedTask, target: Path) -> None:
    """Write ``task``'s files as the directory ``target`` (replacing it whole): into a
    fresh folder beside it, each path checked again and confined to that folder."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        root = staging.resolve()
        for rel, text in task.files.items():
            problem = path_problem(rel)
            path = (root / rel).resolve()
            if problem is not None or not path.is_relative_to(root):
                raise OutputError(root / rel, problem or "it leaves the task directory",
                                  fix="only paths inside the task directory are written")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            if path.suffix == ".sh":
                path.chmod(0o755)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def copy_task(source: Path, target: Path) -> None:
    """Copy a task directory to ``target`` (replaced whole), through a folder beside it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        shutil.copytree(source, staging / "task", symlinks=True)
        if target.exists():
            shutil.rmtree(target)
        (staging / "task").rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
