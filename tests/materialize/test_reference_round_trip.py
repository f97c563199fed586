"""The reference a task was verified with travels with it: the environments repo ships it
(the row's ``reference_json`` and a file beside each staged task), ``materialize`` writes
it back, and the grader's :func:`reference_for` finds it for that content only."""

from __future__ import annotations

import json
from pathlib import Path

from termgrade.builders.environments import build_environments
from termgrade.materialize import materialize
from termgrade.scoring.reference import ReferenceRecord, reference_for
from termgrade.task import load_task
from termgrade.task.digest import REFERENCE_FILE, task_digest
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
