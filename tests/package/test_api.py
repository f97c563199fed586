"""The library is the API: every advertised name imports, and it does what the CLI does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import termgrade

ROOT = Path(__file__).resolve().parents[2]


def test_every_advertised_name_resolves() -> None:
    missing = [name for name in termgrade.__all__ if getattr(termgrade, name, None) is None]
    assert missing == []
    assert set(termgrade.__all__) - {"__version__"} == set(termgrade._API)


def test_import_termgrade_stays_light() -> None:
    code = ("import sys, termgrade\n"
            "heavy = [m for m in ('pandas', 'pyarrow', 'datasets', 'docker', 'pydantic')"
            " if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_library_build_then_validate_agrees_with_the_cli(tmp_path: Path) -> None:
    # The reviewed secrets baseline of the corpus is placed by the library itself, so the
    # library's validate says what `termgrade build` + `termgrade validate` say: valid.
    out = tmp_path / "env"
    summary = termgrade.build_environments(out, task_roots=[ROOT / "environments"])
    assert summary.secrets_baseline is not None and summary.secrets_baseline.is_file()
    report = termgrade.validate_repo(out, load=False)
    assert report.ok, [str(f) for f in report.findings][:5]
