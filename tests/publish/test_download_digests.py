"""A published environments repo downloaded as its card says (``hf download``, here
huggingface_hub's own ``snapshot_download`` on the loopback Hub) has the task digests of
its published rows, although the Hub drops every file mode; so ``grade --reuse`` takes
the earlier run's trials of those tasks."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from huggingface_hub import snapshot_download

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.builders.environments import build_environments
from termgrade.grade import TRIALS_FILE, TrialJob, TrialJournal, grade_model
from termgrade.grade.record import graded_record
from termgrade.grade.reuse import plan_reuse
from termgrade.publish import PublishOptions, RetryPolicy, ValidationOutcome, publish
from termgrade.records.trial import TrialRecord
from termgrade.scoring.trial import RunOutcome
from termgrade.scoring.verifier.result import VerifierResult
from termgrade.task.digest import MODES_FILE, restore_modes, task_digest
from termgrade.validate import validate_repo
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import HubServer
from tests.support.records import trial
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


@pytest.fixture
def downloaded(tmp_path: Path, make_task: MakeTask, hub: HubServer,  # noqa: F811
               ) -> tuple[Path, dict[str, str]]:
    """Build, publish and ``snapshot_download`` an environments repo of three tasks with
    executable scripts; returns the download and the published rows' digests."""
    roots = [make_task(t) for t in ("alpha", "bravo", "charlie")]
    for root in roots:
        (root / "solution" / "solve.sh").chmod(0o755)
        (root / "tests" / "test.sh").chmod(0o755)
    out = tmp_path / "dist" / "envs"
    build_environments(out, task_roots=[roots[0].parent], repo_id="org/envs")
    publish(out, PublishOptions(repo_id="org/envs", endpoint=hub.url, token="hf_dummy",
                                state_dir=tmp_path / "state", retry=RetryPolicy(base_s=0.01)),
            validator=lambda root: ValidationOutcome(True))
    local = Path(snapshot_download("org/envs", repo_type="dataset",
                                   local_dir=tmp_path / "download"))
    rows = pq.read_table(local / "data" / "tasks" / "unseen-00000-of-00001.parquet",
                         columns=["task_id", "task_digest"]).to_pylist()
    return local, {r["task_id"]: r["task_digest"] for r in rows}


AGENT = ModelAgent(Endpoint("http://127.0.0.1:9/v1", "stand-in-model", api_key_env=None),
                   ScaffoldConfig())


class Passing:
    """A trial runner stand-in (no containers): every trial passes; remembers the jobs."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, int]] = []

    def __call__(self, job: TrialJob) -> TrialRecord:
        self.jobs.append((job.task_id, job.attempt))
        now = datetime.now(UTC)
        return graded_record(task_id=job.task_id, model=job.agent.name, attempt=job.attempt,
                             retry_index=job.retry_index, started_at=now, finished_at=now,
                             outcome=RunOutcome(job.agent.name, VerifierResult(reward=1.0)))


def test_the_download_loses_modes_but_keeps_the_digests(
        downloaded: tuple[Path, dict[str, str]]) -> None:
    local, published = downloaded
    solve = local / "tasks" / "alpha" / "solution" / "solve.sh"
    assert not stat.S_IMODE(solve.stat().st_mode) & 0o111  # the Hub kept no mode
    assert {t: task_digest(local / "tasks" / t) for t in published} == published
    assert len(published) == 3


def test_without_the_mode_record_the_digests_change(
        downloaded: tuple[Path, dict[str, str]]) -> None:
    """The defence is the record: delete it and the download's digests no longer match."""
    local, published = downloaded
    (local / "tasks" / "alpha" / MODES_FILE).unlink()
    assert task_digest(local / "tasks" / "alpha") != published["alpha"]
    assert task_digest(local / "tasks" / "bravo") == published["bravo"]


def test_restore_modes_puts_the_modes_back(downloaded: tuple[Path, dict[str, str]]) -> None:
    local, _ = downloaded
    task = local / "tasks" / "alpha"
    assert restore_modes(task) >= 2
    assert stat.S_IMODE((task / "solution" / "solve.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((task / "tests" / "test.sh").stat().st_mode) == 0o755
    assert restore_modes(task) == 0


def test_the_download_validates(downloaded: tuple[Path, dict[str, str]]) -> None:
    """Manifests and archives re-pack from the downloaded tree with the recorded modes."""
    local, _ = downloaded
    report = validate_repo(local, load=False, secrets=False, cache=False)
    assert [f for f in report.findings if f.check == "archive"] == []


def test_grade_reuse_takes_the_trials_of_the_downloaded_tasks(
        downloaded: tuple[Path, dict[str, str]]) -> None:
    """An earlier run graded the published tasks (its trials carry the rows' digests);
    regrading the download reuses every one of them."""
    local, published = downloaded
    earlier = [trial(i, task, messages=False).model_copy(update={
        "trial_id": f"{task}__{i}", "model": "m", "attempt": i, "task_digest": published[task],
        "scaffold_digest": "s" * 64}) for task in published for i in range(2)]
    now = {t: task_digest(local / "tasks" / t) for t in published}
    plan = plan_reuse(earlier, model="m", scaffold=earlier[0].scaffold,
                      scaffold_digest="s" * 64, task_digests=now, k_max=2)
    assert len(plan.records) == 6 and plan.tasks == set(published) and not plan.changed
    # As before the record: modes dropped, nothing reused.
    for task in published:
        os.remove(local / "tasks" / task / MODES_FILE)
    stale = {t: task_digest(local / "tasks" / t) for t in published}
    plan = plan_reuse(earlier, model="m", scaffold=earlier[0].scaffold,
                      scaffold_digest="s" * 64, task_digests=stale, k_max=2)
    assert plan.records == [] and set(plan.changed.values()) == {"task files changed"}


def test_grade_reuse_of_an_earlier_run_regrades_nothing_of_the_download(
        downloaded: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """The earlier run graded the tasks before they were published; regrading the
    downloaded repo's tasks with ``--reuse`` takes all 6 trials and grades none."""
    local, published = downloaded
    first = Passing()
    sources = tmp_path / "tasks"  # make_task's folder: what was built and published
    grade_model([sources], AGENT, tmp_path / "run1", k=2, workers=1, progress=False,
                run=first)
    assert len(first.jobs) == 6
    assert {r.task_digest for r in TrialJournal(tmp_path / "run1" / TRIALS_FILE).load()} \
        == set(published.values())
    again = Passing()
    solve = local / "tasks" / "alpha" / "solution" / "solve.sh"
    assert not stat.S_IMODE(solve.stat().st_mode) & 0o111
    report = grade_model([local / "tasks"], AGENT, tmp_path / "run2", k=2, workers=1,
                         progress=False, run=again, reuse=tmp_path / "run1")
    assert again.jobs == [] and (report.reused, report.graded) == (6, 0)
    assert stat.S_IMODE(solve.stat().st_mode) == 0o755  # what runs is what was built
    # Without the mode record (files as the Hub alone gives them back), nothing is reused.
    for task in published:
        os.remove(local / "tasks" / task / MODES_FILE)
        for path in (local / "tasks" / task).rglob("*.sh"):
            path.chmod(0o644)
    bare = Passing()
    report = grade_model([local / "tasks"], AGENT, tmp_path / "run3", k=2, workers=1,
                         progress=False, run=bare, reuse=tmp_path / "run1")
    assert len(bare.jobs) == 6 and report.reused == 0
    assert set(report.rerun.values()) == {"task files changed"}
