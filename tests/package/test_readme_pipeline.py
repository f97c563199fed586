"""The README's Python pipeline runs as written, on a small corpus and real trial records.

The trials are a synthetic grading corpus (named as such) whose task ids are mapped onto
the tasks under test; everything else is the script, unchanged, run in a fresh process.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from termgrade.trialsets.io import write_trials
from termgrade.trialsets.synthetic import generate
from termgrade.trialsets.synthetic_config import PAPER_LIKE, SyntheticConfig

ROOT = Path(__file__).resolve().parents[2]
TASKS = ("word-frequency", "csv-keyed-join", "tidy-filenames")


def readme_script() -> str:
    text = (ROOT / "README.md").read_text()
    found = re.search(r"<!-- pipeline-script -->\s*```python\n(.*?)```", text, re.DOTALL)
    assert found, "README.md lost its pipeline script"
    return found.group(1)


@pytest.mark.docker
def test_the_readme_pipeline_runs(tmp_path: Path) -> None:
    for task in TASKS:
        shutil.copytree(ROOT / "environments" / task, tmp_path / "environments" / task)
    corpus = generate(SyntheticConfig(models=PAPER_LIKE[:2], n_tasks=len(TASKS), seed=3))
    rename = {f"synthetic-task-{i + 1:04d}": task for i, task in enumerate(TASKS)}
    records = [{**r, "task_id": rename[r["task_id"]]} for r in corpus.records]
    (tmp_path / "runs").mkdir()
    write_trials(tmp_path / "runs" / "trials.jsonl", records)
    done = subprocess.run([sys.executable, "-c", readme_script()], cwd=tmp_path,
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "dist/env valid" in done.stdout and "dist/traj valid" in done.stdout, done.stdout
    assert "'kept': 3" in done.stdout
