"""Every python snippet of the trajectories card runs alone, as a reader pastes it.

A small trajectories repo is built into a local folder (with labels and splits, so the
card's split filter is rendered too); each ```python block of its README is checked
statically (every name it reads is imported or defined in it) and then run by itself in
a fresh namespace, the card's repo id swapped for the folder (``load_dataset`` reads a
local repo the same way) and from the folder (a clone, for the pyarrow snippet).
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from termgrade.builders.trajectories import build_trajectories
from termgrade.records import LabelRow, SplitRow
from tests.support.records import trial, write_trials
from tests.support.task_dirs import MakeTask

REPO_ID = "lab/our-trajectories"
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def unbound_names(code: str) -> set[str]:
    """Names ``code`` reads that it neither imports, assigns, defines nor gets as a
    parameter (one flat scope: enough for a card snippet), builtins aside."""
    tree = ast.parse(code)
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
    return read - bound - set(dir(builtins))


def test_the_name_check_catches_a_snippet_that_leans_on_another() -> None:
    assert unbound_names('wins = sft.filter(lambda r: r["passed"])') == {"sft"}
    assert unbound_names("from datasets import load_dataset\n"
                         'sft = load_dataset("x")\n'
                         'wins = sft.filter(lambda r: r["passed"])') == set()


@pytest.fixture
def repo(make_task: MakeTask, tmp_path: Path) -> Path:
    make_task("alpha")
    tasks = make_task("bravo").parent
    records = [trial(i) for i in range(4)] + [trial(i, task_id="bravo") for i in range(4, 7)]
    labels = [LabelRow(task_id="alpha", model="org/model-a", scaffold="terminus-2",
                       pass_rate=0.5, band="central", n_counted=8, k=8, n_passed=4),
              LabelRow(task_id="bravo", model="org/model-a", scaffold="terminus-2",
                       pass_rate=1.0, band="one", n_counted=8, k=8, n_passed=8)]
    splits = [SplitRow(task_id="alpha", split="train7", role="train", pass_rate=0.5)]
    out = tmp_path / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records),
                       task_roots=[tasks], labels=labels, splits=splits, repo_id=REPO_ID)
    return out


def test_every_card_snippet_runs_alone(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    card = (repo / "README.md").read_text()
    snippets = _BLOCK.findall(card)
    assert len(snippets) >= 4, card  # quick start, episode text, split filter, pyarrow
    assert any("train_wins" in s for s in snippets)  # the split filter is among them
    monkeypatch.chdir(repo)  # the pyarrow snippet reads a clone's data/ folder
    for snippet in snippets:
        assert unbound_names(snippet) == set(), snippet
        local = snippet.replace(repr(REPO_ID).replace("'", '"'), repr(str(repo)))
        assert REPO_ID not in local.replace("huggingface.co/datasets/" + REPO_ID, ""), snippet
        exec(compile(local, "<card snippet>", "exec"), {"__name__": "__main__"})
