"""Contamination against external benchmarks, in the Terminal-Bench and Harbor formats."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from termgrade.audit import AuditSettings, audit_corpus, find_tasks, read_task, read_tbench

FIXTURES = Path(__file__).parents[1] / "fixtures" / "audit"
TBENCH = FIXTURES / "tbench"


def test_tbench_task_is_read() -> None:
    doc = read_tbench(TBENCH / "ledger-balance")
    assert doc.format == "tbench"
    assert doc.instruction.startswith("A small bookkeeping export lives at /app/ledger.csv")
    assert [s.path for s in doc.test_sources] == ["tests/test_outputs.py"]
    assert doc.test_script is not None and "uv pip install" in doc.test_script
    assert [s.path for s in doc.solution] == ["solution.sh"]
    assert doc.metadata["difficulty"] == "easy"
    assert doc.metadata["domain"] == "data-processing"
    assert doc.problems == ()


def test_early_tbench_descriptions_form(tmp_path: Path) -> None:
    task = tmp_path / "old-task"
    task.mkdir()
    (task / "task.yaml").write_text(textwrap.dedent("""\
        descriptions:
          - key: hard
            description: terse version
          - key: base
            description: Compress every log under /var/log/app older than a day.
        difficulty: medium
    """))
    doc = read_task(task)
    assert doc.instruction == "Compress every log under /var/log/app older than a day."
    assert doc.test_sources == ()


def test_unreadable_tbench_task_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    task = tmp_path / "broken"
    task.mkdir()
    (task / "task.yaml").write_text("instruction: [unclosed\n")
    doc = read_tbench(task)
    assert doc.instruction == ""
    assert any("not valid YAML" in problem for problem in doc.problems)


def test_find_tasks_walks_a_benchmark_checkout(tmp_path: Path) -> None:
    checkout = tmp_path / "terminal-bench"
    shutil.copytree(TBENCH / "ledger-balance", checkout / "tasks" / "ledger-balance")
    shutil.copytree(FIXTURES / "corpus" / "csv-column-sum", checkout / "harbor" / "csv")
    (checkout / ".git" / "x").mkdir(parents=True)
    assert [p.name for p in find_tasks(checkout)] == ["csv", "ledger-balance"]


def test_copied_task_is_flagged_and_clean_tasks_are_not() -> None:
    report = audit_corpus([FIXTURES / "corpus", FIXTURES / "contaminated"],
                          against=[TBENCH], progress=False)
    assert report.external_tasks == 1
    flagged = {(task_id, m.field, m.external_id) for task_id, m in
               report.flagged_contamination()}
    assert flagged == {("ledger-balances", "instruction", "ledger-balance"),
                       ("ledger-balances", "tests", "ledger-balance")}
    ours = next(t for t in report.tasks if t.task_id == "ledger-balances")
    instruction = next(m for m in ours.contamination if m.field == "instruction")
    assert instruction.reverse_containment == 1.0 and instruction.containment > 0.9
    assert all(t.passed for t in report.tasks if t.task_id != "ledger-balances")
    assert not report.passed


def test_contamination_threshold_is_respected() -> None:
    report = audit_corpus([FIXTURES / "contaminated"], against=[TBENCH],
                          settings=AuditSettings(contamination_threshold=1.0), progress=False)
    fields = {m.field for _, m in report.flagged_contamination()}
    assert fields == {"instruction"}  # the tests were extended: below 1.0 both ways


def test_harbor_format_external_and_self_exclusion(tmp_path: Path) -> None:
    external = tmp_path / "tb2"
    shutil.copytree(FIXTURES / "contaminated" / "ledger-balances", external / "ledger-v2")
    corpus = FIXTURES / "contaminated"
    report = audit_corpus([corpus], against=[external, corpus], progress=False)
    assert report.external_tasks == 1  # our own directory is not compared with itself
    matches = {m.field: m for m in report.tasks[0].contamination}
    assert matches["tests"].containment == 1.0 and matches["tests"].flagged
    assert matches["tests"].external_id == "ledger-v2"


def test_no_external_means_no_contamination_records() -> None:
    report = audit_corpus([FIXTURES / "contaminated"], progress=False)
    assert report.tasks[0].contamination == [] and report.passed
