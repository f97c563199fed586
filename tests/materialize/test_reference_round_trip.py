"""The reference a task was verified with travels with it: the environments repo ships it
(the row's ``reference_json`` and a file beside each staged task), ``materialize`` writes
it back, and the grader's :func:`reference_for` finds it for that content only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from termgrade.builders.environments import build_environments
from termgrade.materialize import materialize
from termgrade.publish import PublishOptions, RetryPolicy, ValidationOutcome, publish
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.task import load_task
from termgrade.task.digest import REFERENCE_FILE, task_digest
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import HubServer
from tests.support.records import verified, write_jsonl
from tests.support.task_dirs import MakeTask


def test_the_reference_ships_with_the_task_and_comes_back(make_task: MakeTask,
                                                          tmp_path: Path) -> None:
    root = make_task("alpha")
    digest = task_digest(root)
    reference = ReferenceRecord(task_digest=digest, footprint=["/srv/greet"],
                                tests={"test_outputs.py::test_output_exists": "passed"})
    record = verified(root).model_copy(update={"reference": reference})
    out = tmp_path / "env"
    build_environments(out, task_roots=[root.parent],
                       verify=write_jsonl(tmp_path / "verify.jsonl", [record]))
    staged = out / "tasks" / "alpha"
    assert json.loads((staged / REFERENCE_FILE).read_text())["footprint"] == ["/srv/greet"]
    assert task_digest(staged) == digest  # the file is not the task's content
    assert reference_for(load_task(staged)) == reference

    back = tmp_path / "back" / "alpha"
    materialize(out, "alpha", back)
    assert reference_for(load_task(back)) == reference
    # another content: the shipped record is not used
    (back / "instruction.md").write_text("Something else.\n")
    assert reference_for(load_task(back)) is None


@pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
def test_the_reference_comes_back_from_a_hub_repo_id(make_task: MakeTask, tmp_path: Path,
                                                     hub: HubServer) -> None:  # noqa: F811
    """Issue 44, item 10: from a repo id the row was rebuilt without its reference_json,
    so `.termgrade-reference.json` was dropped (kept from a folder or a parquet file)."""
    root = make_task("alpha")
    reference = ReferenceRecord(task_digest=task_digest(root), footprint=["/srv/greet"],
                                tests={"test_outputs.py::test_output_exists": "passed"})
    record = verified(root).model_copy(update={"reference": reference})
    out = tmp_path / "env"
    build_environments(out, task_roots=[root.parent], repo_id="org/envs",
                       verify=write_jsonl(tmp_path / "verify.jsonl", [record]))
    publish(out, PublishOptions(repo_id="org/envs", endpoint=hub.url, token="hf_dummy",
                                state_dir=tmp_path / "state", retry=RetryPolicy(base_s=0.01)),
            validator=lambda _root: ValidationOutcome(True))
    back = materialize("org/envs", "alpha", tmp_path / "back", endpoint=hub.url).path
    assert (back / REFERENCE_FILE).is_file()
    assert reference_for(load_task(back)) == reference
