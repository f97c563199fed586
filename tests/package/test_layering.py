"""The floors (docs/architecture.md): no import in ``termgrade/`` runs back up.

``lint-imports`` checks the ``floors`` contract of pyproject.toml over the whole import graph,
function-level imports included; a copy of the package with one upward import added shows the
check can fail, and a second check keeps every module off the package root (``termgrade``'s
``__init__`` is the users' façade and imports the stages itself)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", "pyproject.toml"],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin"})


def test_no_import_runs_back_up() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project)
    shutil.copytree(ROOT / "termgrade", project / "termgrade",
                    ignore=shutil.ignore_patterns("__pycache__"))
    low = project / "termgrade" / "records" / "trial.py"
    low.write_text(low.read_text() + "\n\ndef _up() -> None:\n"
                   "    from termgrade.labels import compute  # noqa: F401\n")
    result = _lint(project)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout and "termgrade.records.trial" in result.stdout


def test_a_room_of_scoring_importing_a_later_one_breaks_the_rooms_contract(
        tmp_path: Path) -> None:
    """The review (which decides what reaches B) must not lean on the verifier run."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project)
    shutil.copytree(ROOT / "termgrade", project / "termgrade",
                    ignore=shutil.ignore_patterns("__pycache__"))
    low = project / "termgrade" / "scoring" / "review" / "integrity.py"
    low.write_text(low.read_text() + "\n\ndef _up() -> None:\n"
                   "    from termgrade.scoring.verifier import run  # noqa: F401\n")
    result = _lint(project)
    assert result.returncode != 0
    assert "scoring/'s rooms" in result.stdout and "BROKEN" in result.stdout
    assert "termgrade.scoring.review.integrity" in result.stdout


def test_no_module_imports_the_package_root() -> None:
    graph = grimp.build_graph("termgrade", include_external_packages=False)
    importers = sorted(graph.find_modules_that_directly_import("termgrade"))
    assert importers == [], f"import from the defining module, not `termgrade`: {importers}"
