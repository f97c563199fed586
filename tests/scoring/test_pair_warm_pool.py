"""The warm pool: a pair made ahead grades exactly as one made by the trial, and no pair
outlives its use (real Docker containers, a real task built from the fixture template)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.sandbox.engine import docker_client
from termgrade.sandbox.images import build_task_image
from termgrade.sandbox.ownership import OWNER_LABEL, owner_id
from termgrade.scoring.pair.warm import WARM, WarmPool
from termgrade.scoring.trial import make_ahead, run_task
from termgrade.task import Task, load_task
from tests.support.task_dirs import write_task

pytestmark = [pytest.mark.docker]


def warm_containers() -> list[str]:
    """This process's containers made by the warm pool."""
    return [c.name for c in docker_client().containers.list(
        all=True, filters={"label": f"{OWNER_LABEL}={owner_id()}"}, ignore_removed=True)
        if "-warm-" in (c.name or "")]


@pytest.fixture
def task(tmp_path: Path) -> Iterator[tuple[Task, str]]:
    loaded = load_task(write_task(tmp_path / "tasks", "pool-hello"))
    yield loaded, build_task_image(loaded).tag
    WARM.drain()


def test_a_trial_on_a_warm_pair_scores_as_on_its_own(task: tuple[Task, str]) -> None:
    loaded, image = task
    used = WARM.used
    assert make_ahead(loaded, image)
    oracle = run_task(loaded, image, AgentName.ORACLE)
    assert oracle.reward == 1.0, (oracle.error, oracle.failure)
    assert WARM.used == used + 1 and "create" not in oracle.durations  # it was warm
    assert make_ahead(loaded, image)
    nop = run_task(loaded, image, AgentName.NOP)  # an oracle-free container fails
    assert nop.reward == 0.0 and nop.verifier is not None and nop.verifier.attested
    assert WARM.used == used + 2
    cold = run_task(loaded, image, AgentName.ORACLE)  # none made ahead: made by the trial
    assert cold.reward == 1.0 and "create" in cold.durations
    for phase in ("prepare", "agent", "freeze", "review", "transfer", "start_b", "broker",
                  "verify", "decision"):
        assert phase in oracle.durations and phase in cold.durations, phase


def test_a_pair_staged_before_the_tests_changed_is_removed_not_used(
        task: tuple[Task, str]) -> None:
    loaded, image = task
    used = WARM.used
    assert make_ahead(loaded, image)
    deadline = time.monotonic() + 60
    while len(warm_containers()) < 2 and time.monotonic() < deadline:  # made, tests staged
        time.sleep(0.05)
    assert len(warm_containers()) == 2
    test_file = loaded.paths.tests_dir / "test_outputs.py"
    # The edit makes the tests demand what the solution never writes.
    test_file.write_text(test_file.read_text().replace('"hello', '"goodbye'))
    outcome = run_task(loaded, image, AgentName.ORACLE)
    assert WARM.used == used and "create" in outcome.durations
    assert outcome.reward == 0.0  # graded by the edited tests, not the staged copy
    assert warm_containers() == []


def test_the_pool_is_bounded_and_drained(task: tuple[Task, str]) -> None:
    loaded, image = task
    pool = WarmPool(limit=1)

    def make() -> object:
        from termgrade.scoring.pair.containers import make_pair
        from termgrade.scoring.trial import scoring_setup

        spec, closure, procs = scoring_setup(loaded, image)
        return make_pair(loaded, spec, closure, procs, f"{loaded.safe_name}-warm")

    assert pool.make_ahead(str(loaded.paths.root), make)  # type: ignore[arg-type]
    assert not pool.make_ahead(str(loaded.paths.root), make)  # type: ignore[arg-type]
    assert pool.drain() == 1
    assert warm_containers() == [] and pool.pending() == 0
