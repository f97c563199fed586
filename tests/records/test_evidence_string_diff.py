"""A long string mismatch's failure message shows where the strings differ.

A real pytest run (a subprocess, no Docker) of a tmp test file whose strings differ far
past what pytest's one-line repr keeps; a conftest reports each failure's reprcrash
message and longrepr text as the grader's in-container plugin sends them (message cut to
300 characters, the longrepr's last 1200), and :func:`evidence_list` makes the record.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from termgrade.records.evidence import MAX_MESSAGE, evidence_list, failure_lines

TESTS = '''
PREFIX = "header;" * 80


def test_long_tail():
    expected = PREFIX + "total=1234 rows; " + "row ok;" * 30
    got = PREFIX + "total=1243 rows; " + "row bad;" * 30
    assert got == expected


def test_huge_difference():
    expected = PREFIX + "A" + "x" * 3000
    got = PREFIX + "B" + "y" * 3000
    assert got == expected


def test_short():
    assert "abc" == "abd"


def test_not_strings():
    assert [1, 2] == [1, 3]
'''

CONFTEST = r'''
import json

def pytest_runtest_logreport(report):
    if report.failed:
        message = report.longrepr.reprcrash.message
        with open("reports.jsonl", "a") as sent:
            sent.write(json.dumps({"id": report.nodeid, "msg": str(message)[:300],
                                   "repr": str(report.longreprtext)[-1200:]}) + "\n")
'''


def _run(tmp_path: Path) -> dict[str, dict[str, object]]:
    (tmp_path / "test_strings.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                           "no:cacheprovider", "test_strings.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    reports = tmp_path / "reports.jsonl"
    lines = reports.read_text().splitlines() if reports.exists() else []
    sent = [json.loads(line) for line in lines]
    assert len(sent) == 4, done.stdout + done.stderr
    return {e["id"]: {"message": e["msg"], "repr": e["repr"]} for e in sent}


def test_the_message_shows_where_two_long_strings_differ(tmp_path: Path) -> None:
    sent = _run(tmp_path)
    outcomes = {name: "failed" for name in sent}
    by_name = {e.name.split("::")[-1]: e for e in evidence_list(outcomes, sent)}

    # pytest's diff lines start a few characters before the difference (it skips the
    # identical head); the message is cut at 300 characters: the + line is whole in the
    # longrepr only, and the record takes it from there
    long_tail = by_name["test_long_tail"].message or ""
    assert long_tail.startswith("AssertionError: assert 'header;")  # pytest's line, first
    minus, plus, mark = long_tail.splitlines()[1:4]
    assert minus.startswith("- ") and "total=1234 rows; row ok;" in minus
    assert plus.startswith("+ ") and "total=1243 rows; row bad;" in plus
    as_sent = str(sent[next(n for n in sent if n.endswith("test_long_tail"))]["message"])
    assert "\n  + " not in as_sent  # as sent, the message had lost its + line
    first = 2 + next(i for i, (a, b) in enumerate(zip(minus[2:], plus[2:], strict=False))
                     if a != b)
    assert mark.startswith("? ") and mark.index("^") == first  # the ? line points at it
    assert len(long_tail) <= MAX_MESSAGE

    # a difference followed by thousands of characters: each diff line is cut short in
    # both texts sent (the message's + line is gone, the longrepr keeps only the + line's
    # tail): the message is left as pytest wrote it, never a guess
    node = next(n for n in sent if n.endswith("test_huge_difference"))
    assert by_name["test_huge_difference"].message == sent[node]["message"]

    # short strings and other comparisons keep pytest's message as it was sent
    for name in ("test_short", "test_not_strings"):
        node = next(n for n in sent if n.endswith(name))
        assert by_name[name].message == sent[node]["message"]
    # the one-line reasons stay pytest's first line
    assert failure_lines(by_name.values(), limit=4)[0].startswith(
        "test_long_tail: AssertionError: assert 'header;")
