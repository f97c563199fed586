"""Shared fixtures (a task-directory factory, an isolated Hugging Face home, Harbor, verl)
and the session hooks (Docker tests skipped when no engine answers). Helpers that are
not fixtures live in ``tests/support/``."""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# `datasets` and `huggingface_hub` read their cache paths once, on import: point them at a
# scratch home before any test module imports them (the fixture below then isolates each
# test's reads of the environment), so no run reuses a cache an earlier run left behind.
_SESSION_HF_HOME = Path(tempfile.mkdtemp(prefix="termgrade-tests-hf-"))
os.environ["HF_HOME"] = str(_SESSION_HF_HOME)
os.environ["HF_DATASETS_CACHE"] = str(_SESSION_HF_HOME / "datasets")

import pytest  # noqa: E402

from tests.support.docker_engine import engine_problem  # noqa: E402
from tests.support.harbor import Harbor, HarborUnavailable, ensure_harbor  # noqa: E402
from tests.support.task_dirs import MakeTask, write_task  # noqa: E402


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
    # verify records reference runs by task digest: never into the checkout's state dir,
    # never one test's reference judging another's trials
    monkeypatch.setenv("TERMGRADE_REFERENCE_DIR", str(tmp_path_factory.mktemp("references")))
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
    takes about 20 s here, so only the training tests, which take this fixture, pay it.
    A test that takes it is marked ``slow`` (see ``pytest_collection_modifyitems``)."""
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


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects: the marks added here count
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that takes the ``verl`` fixture (importing verl alone takes
    10-20 s here). Skip every ``docker``-marked test, with the reason and the fix, when no
    Docker engine answers or it lacks ``termgrade/base:local``: probed once (3 s at most),
    and only when such a test was collected."""
    for item in items:
        if "verl" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
    docker_items = [item for item in items if item.get_closest_marker("docker")]
    if not docker_items:
        return
    problem = engine_problem()
    if problem is None:
        return
    skip = pytest.mark.skip(reason=problem)
    for item in docker_items:
        item.add_marker(skip)


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
