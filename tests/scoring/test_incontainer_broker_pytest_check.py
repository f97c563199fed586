"""What the broker reads from a command line before it keys a session (no Docker).

The Docker half, attacks and honest shapes, is ``test_verifier_session_keys.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

WHERE = Path(__file__).parents[2] / "termgrade/scoring/incontainer/broker_pytest_check.py"
"""The broker's check of who gets a key (staged into ``termgrade_broker`` as one file)."""
CONFIG = {"trusted": ["/opt/venv", "/usr/lib/python3.11", "/usr/bin/python3.11",
                      "/root/.local/share/uv/tools/pytest", "/tests", str(WHERE.parent)],
          "tests_dir": "/tests"}


@pytest.fixture(scope="module")
def broker() -> ModuleType:
    sys.path.insert(0, str(WHERE.parent))  # it imports broker_proc from beside it
    try:
        spec = importlib.util.spec_from_file_location("broker_pytest_check_under_test", WHERE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(WHERE.parent))
    return module


@pytest.mark.parametrize(("argv", "target"), [
    (["python3", "-m", "pytest", "-x"], ("module", "pytest")),
    (["python3", "-mpytest"], ("module", "pytest")),
    (["python3", "-B", "-W", "ignore", "-X", "dev", "-m", "pytest"], ("module", "pytest")),
    (["python3", "-Werror", "-Bm", "pytest"], ("module", "pytest")),
    (["python3", "--check-hash-based-pycs", "never", "-m", "pytest"], ("module", "pytest")),
    (["python3", "generate.py", "-m", "pytest"], ("script", "generate.py")),
    (["python3", "-W", "-m", "x.py"], ("script", "x.py")),  # -W takes "-m" as its value
    (["python3", "-c", "import pytest; pytest.main()"],
     ("code", "import pytest; pytest.main()")),
    (["python3", "-Ic", "x"], ("code", "x")),
    (["/opt/venv/bin/python3", "/opt/venv/bin/pytest", "-q"],
     ("script", "/opt/venv/bin/pytest")),
    (["python3", "-"], ("stdin", "-")),
    (["python3", "-u"], ("stdin", "-")),
    (["python3", "--", "run.py"], ("script", "run.py")),
])
def test_what_a_python_command_line_runs(broker: ModuleType, argv: list[str],
                                         target: tuple[str, str]) -> None:
    assert broker.python_target(argv) == target


@pytest.mark.parametrize("argv", [
    ["python3", "-m", "pytest", "/tests/test_outputs.py"],
    ["/opt/venv/bin/python3", "/opt/venv/bin/pytest", "-rA"],
    ["/opt/venv/bin/python3", "/opt/venv/bin/py.test"],
    ["/root/.local/share/uv/tools/pytest/bin/python",
     "/root/.local/share/uv/tools/pytest/bin/pytest"],
    ["python3", "/tests/run_tests.py"],  # a runner of the tests' own (pytest.main)
])
def test_the_tasks_own_pytest_is_keyed(broker: ModuleType, argv: list[str]) -> None:
    assert broker.not_pytest(argv, "/", CONFIG) is None


@pytest.mark.parametrize(("argv", "why"), [
    (["python3", "/app/generate.py"], "/app/generate.py"),
    (["python3", "-c", "import pytest; pytest.main()"], "code text"),
    (["python3", "-m", "generate"], "the module generate"),
    (["python3", "-"], "stdin text"),
    (["python3", "/app/pytest"], "/app/pytest"),  # named pytest, not the closure's
    (["python3", "/opt/venv/bin/tool.py"], "/opt/venv/bin/tool.py"),  # closure, not pytest
    (["python3", "/tests/../app/x.py"], "/app/x.py"),
])
def test_any_other_python_is_refused(broker: ModuleType, argv: list[str], why: str) -> None:
    refused = broker.not_pytest(argv, "/", CONFIG)
    assert refused is not None and why in refused


def test_the_closure_excludes_the_tests_and_the_graders_dir(broker: ModuleType) -> None:
    roots = broker.closure_roots(CONFIG)
    assert "/tests" not in roots and str(WHERE.parent) not in roots
    assert "/opt/venv" in roots
