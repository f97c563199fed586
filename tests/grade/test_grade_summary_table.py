"""`grade`'s per-task table on an 80-column terminal: a task's name is never cut."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from termgrade.cli.grade import print_per_task
from termgrade.grade.summary import TaskTally

LONG = "c-fix-the-memory-bugs-of-csvstat-and-keep-its-regression-tests-green-too"


def test_long_task_names_are_printed_whole_on_one_line() -> None:
    tasks = [TaskTally(LONG, 8, 3, 0, 12, "mid"), TaskTally("word-frequency", 8, 8, 1, 0, "one")]
    console = Console(file=StringIO(), width=80)
    print_per_task(tasks, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.strip("│ ").split("│")]
            for line in text.splitlines() if line.startswith("│")}
    assert rows[LONG] == [LONG, "8", "3", "0.38", "mid", "0", "12"], text
    assert rows["word-frequency"] == ["word-frequency", "8", "8", "1.00", "one", "1", "0"]


def test_short_names_keep_the_table_within_the_terminal() -> None:
    console = Console(file=StringIO(), width=80)
    print_per_task([TaskTally("word-frequency", 8, 8, 1, 0, "one")], console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert max(len(line) for line in text.splitlines()) <= 80, text
