"""Shared fixtures: a task-directory factory, an isolated Hugging Face home, and Harbor."""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# `datasets` and `huggingface_hub` read their cache paths once, on import: point them at a
# scratch home before any test module imports them (the fixture below then isolates each
# test's reads of the environment), so no run reuses a cache an earlier run left behind.
_SESSION_HF_HOME = Path(tempfile.mkdtemp(prefix="termgrade-tests-hf-"))
os.environ["HF_HOME"] = str(_SESSION_HF_HOME)
os.environ["HF_DATASETS_CACHE"] = str(_SESSION_HF_HOME / "datasets")

import pytest  # noqa: E402

from tests.support.harbor import Harbor, HarborUnavailable, ensure_harbor  # noqa: E402

STANDARD_TEST_SH = """\
#!/usr/bin/env bash
mkdir -p /logs/verifier
cd /tests || exit 1
/opt/venv/bin/python -m pytest -c /dev/null --rootdir=/tests --confcutdir=/tests \\
  -p no:cacheprovider --junitxml /logs/verifier/junit.xml -rA /tests/test_outputs.py
if [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""

CHECKS_HELLO = """\
from pathlib import Path


def test_output_exists():
    assert Path("/app/out.txt").is_file()


def test_output_content():
    assert Path("/app/out.txt").read_text().strip() == "hello"
"""

MakeTask = Callable[..., Path]


DEFAULT_TOML = """\
schema_version = "1.4"
[metadata]
difficulty = "easy"
domain = "fixtures"
[verifier]
timeout_sec = 60.0
[agent]
timeout_sec = 60.0
"""


def write_task(
    parent: Path,
    task_id: str = "fixture-task",
    *,
    solve: str = "echo hello > /app/out.txt\n",
    tests: str = CHECKS_HELLO,
    test_sh: str = STANDARD_TEST_SH,
    dockerfile: str = "FROM termgrade/base:local\nWORKDIR /app\n",
    toml: str = "",
    extra_test_files: dict[str, str] | None = None,
) -> Path:
    """Write a small Harbor task under ``parent``; every piece can be overridden."""
    root = parent / task_id
    for sub in ("environment", "solution", "tests"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "task.toml").write_text(toml or DEFAULT_TOML)
    (root / "instruction.md").write_text("Write hello to /app/out.txt.\n")
    (root / "environment" / "Dockerfile").write_text(dockerfile)
    (root / "solution" / "solve.sh").write_text("#!/usr/bin/env bash\n" + solve)
    (root / "tests" / "test.sh").write_text(test_sh)
    (root / "tests" / "test_outputs.py").write_text(tests)
    for name, text in (extra_test_files or {}).items():
        (root / "tests" / name).write_text(text)
    return root


@pytest.fixture
def make_task(tmp_path: Path) -> MakeTask:
    """Write a small Harbor task under tmp_path/tasks (see :func:`write_task`)."""

    def _make(task_id: str = "fixture-task", **pieces: object) -> Path:
        return write_task(tmp_path / "tasks", task_id, **pieces)  # type: ignore[arg-type]

    return _make


@pytest.fixture(autouse=True)
def _isolated_hf_home(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reads or writes the real Hugging Face cache or token."""
    home = tmp_path_factory.mktemp("hf_home")
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(home / "datasets"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_TOKEN", "hf_dummy_token_for_tests")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TERMGRADE_PROGRESS", "0")
    yield


@pytest.fixture(scope="session")
def harbor() -> Harbor:
    """Harbor 0.26 in ``.venv-harbor``, installed on first use by scripts/ensure_harbor.sh
    (see :mod:`tests.support.harbor`); run it through :class:`Harbor` (telemetry off).
    When the install fails, every test that takes this fixture fails with its messages."""
    try:
        return ensure_harbor()
    except HarborUnavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def verl() -> Any:
    """verl 0.9.1 (verl[verl-core] on a CPU torch), imported once per session: the import
    takes about 20 s here, so only the training tests, which take this fixture, pay it."""
    import verl
    import verl.experimental.agent_loop.agent_loop
    import verl.trainer.ppo.core_algos

    return verl


@pytest.fixture
def battery() -> list[Any]:
    """The shipped attack battery (termgrade/attacks/scripts)."""
    from termgrade.attacks import load_attacks

    attacks = load_attacks()
    assert len(attacks) >= 3
    return attacks


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    shutil.rmtree(_SESSION_HF_HOME, ignore_errors=True)


_EXIT_STATUS: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT_STATUS[:] = [int(exitstatus)]


@atexit.register  # registered before torch, Ray or verl are imported: runs after their handlers
def _exit_without_interpreter_teardown() -> None:
    """End the test process once every atexit handler has run, with pytest's own status.

    One process imports torch, Ray, verl, transformers and pyarrow together; the interpreter's
    teardown of their extension modules (threads they leave) crashed one CI run with SIGSEGV
    after all 1,317 tests had passed. Nothing is left to do by then: the results are written,
    pytest's clean-up and every library's atexit handler have run. (``PYTHONFAULTHANDLER=1``
    in scripts/test.sh prints where any crash before this point happens.)
    """
    if _EXIT_STATUS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT_STATUS[0])
