"""A separate-mode task in the layout Harbor itself writes (``harbor init --verifier-mode
separate``) loads, verifies and grades offline in TermGrade, and TermGrade reads its
task.toml as Harbor 0.26 does: the same mode, the same verifier build context, the same
artifacts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from termgrade.task import load_task
from tests.support.harbor import Harbor

pytestmark = [pytest.mark.docker, pytest.mark.harbor, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
HARBOR_VIEW = textwrap.dedent("""\
    import json, sys
    from pathlib import Path
    from harbor.models.task.config import TaskConfig
    from harbor.models.task.paths import TaskPaths
    from harbor.models.task.artifacts import normalize_artifact_entries
    from harbor.models.task.verifier_mode import (
        resolve_task_verifier_mode, resolve_verifier_environment_definition)
    root = Path(sys.argv[1])
    config = TaskConfig.model_validate_toml((root / "task.toml").read_text())
    definition = resolve_verifier_environment_definition(config, TaskPaths(root))
    print(json.dumps({
        "mode": resolve_task_verifier_mode(config).value,
        "directory": str(definition.directory),
        "bundled_tests": definition.bundled_tests,
        "artifacts": [a.source for a in normalize_artifact_entries(config.artifacts)],
    }))
    """)
CHECKS = textwrap.dedent("""\
    from pathlib import Path


    def test_outputs():
        assert Path("/app/out.txt").read_text().strip() == "hello"
    """)


def harbor_init(harbor: Harbor, where: Path) -> Path:
    done = harbor.run(["init", "tg/sep-harbor", "--task", "--verifier-mode", "separate",
                       "-o", str(where)], cwd=where, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    root = where / "sep-harbor"
    assert (root / "tests" / "Dockerfile").is_file()
    return root


def make_offline(root: Path) -> None:
    """Fill in Harbor's template: a solution, real checks (Harbor's own test.sh, which
    runs `pytest --ctrf ... /tests/test_outputs.py`, is kept), and images that build here
    with no network: FROM the local base image instead of a registry's, the rest of
    Harbor's tests/Dockerfile (`WORKDIR /app`, `COPY . /tests/`) kept."""
    (root / "solution" / "solve.sh").write_text("#!/bin/bash\necho hello > /app/out.txt\n")
    (root / "environment" / "Dockerfile").write_text(
        "FROM termgrade/base:local\nRUN rm -rf /opt/venv\nWORKDIR /app\n")
    recipe = (root / "tests" / "Dockerfile").read_text()
    kept = [line for line in recipe.splitlines()
            if line.startswith(("WORKDIR", "COPY . "))]
    assert kept == ["WORKDIR /app", "COPY . /tests/"], recipe
    (root / "tests" / "Dockerfile").write_text("FROM termgrade/base:local\n"
                                               + "\n".join(kept) + "\n")
    (root / "tests" / "test_outputs.py").write_text(CHECKS)
    assert "pytest --ctrf" in (root / "tests" / "test.sh").read_text()  # Harbor's, kept
    config = root / "task.toml"
    text, count = re.subn(r"(?m)^artifacts = \[\]$", 'artifacts = ["/app/out.txt"]',
                          config.read_text())
    assert count == 1, text
    config.write_text(text)


def test_harbor_init_separate_task_loads_verifies_and_grades(harbor: Harbor,
                                                              tmp_path: Path) -> None:
    root = harbor_init(harbor, tmp_path)
    (root / "instruction.md").write_text("Write hello to /app/out.txt.\n")  # Harbor's is empty
    task = load_task(root)  # otherwise as Harbor wrote it
    assert task.config.separate_verifier and task.config.artifacts == []
    source = task.verifier_image_source
    assert source is not None and source.context == root / "tests"

    make_offline(root)
    task = load_task(root)
    seen = harbor.python_run(HARBOR_VIEW, str(root), cwd=tmp_path)
    assert seen.returncode == 0, seen.stderr
    harbors = json.loads(seen.stdout.strip().splitlines()[-1])
    assert harbors == {"mode": "separate", "directory": str(root / "tests"),
                       "bundled_tests": True,
                       "artifacts": task.config.artifacts}
    assert task.verifier_image_source is not None
    assert task.verifier_image_source.context == Path(harbors["directory"])

    out = tmp_path / "verify.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "termgrade", "verify", str(root), "-n", "1", "--json",
         "-o", str(out), "--journal", str(tmp_path / "journal.jsonl")],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    record = json.loads(out.read_text().splitlines()[0])
    assert record["verdict"] == "verified", record
    assert record["oracle_rewards"] == [1.0] and record["nop_reward"] == 0.0
