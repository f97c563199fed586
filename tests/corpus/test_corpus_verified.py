"""CI verifies the whole embedded corpus: every task must be `verified` over 3 oracle runs."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from termgrade.task import discover_tasks, load_task
from termgrade.verify import Journal, Verdict, verify_tasks

ENVIRONMENTS = Path(__file__).resolve().parents[2] / "environments"


def test_corpus_shape() -> None:
    tasks = [load_task(p) for p in discover_tasks(ENVIRONMENTS)]
    assert len(tasks) >= 40
    domains = Counter(t.config.domain for t in tasks)
    difficulties = Counter(t.config.difficulty for t in tasks)
    assert len(domains) >= 8, domains
    assert all(difficulties[d] >= 8 for d in ("easy", "medium", "hard")), difficulties
    for task in tasks:
        meta = task.config.metadata
        assert {"domain", "difficulty", "author", "source"} <= set(meta), task.task_id


@pytest.mark.docker
@pytest.mark.slow
def test_every_corpus_task_is_verified(tmp_path: Path) -> None:
    workers = int(os.environ.get("TERMGRADE_WORKERS", "2"))
    report = verify_tasks([ENVIRONMENTS], repeat=3, workers=workers,
                          journal=Journal(tmp_path / "journal.jsonl"), progress=False)
    bad = {r.task_id: (r.verdict.value, r.error) for r in report.records
           if r.verdict is not Verdict.VERIFIED}
    assert not bad, bad
    assert all(r.n_assertions >= 10 for r in report.records)
    assert sum(r.n_assertions for r in report.records) / len(report.records) >= 14
