import os
import subprocess

import pytest

TOOL = "/app/incidents"
SAMPLE = "/app/logs/syslog"

SAMPLE_EXPECTED = """\
== incident 1: 2024-12-31T23:58:55 .. 2025-01-01T00:00:32 (2 triggers, 8 lines)
Dec 31 23:59:10 web-01 systemd[1]: Starting Daily apt upgrade and clean activities...
Dec 31 23:59:40 db-01 postgres[733]: LOG:  checkpoint starting: time
Dec 31 23:59:55 web-01 kernel: [812345.100] java invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0
 [812345.101] CPU: 1 PID: 4121 Comm: java Not tainted 6.1.0-18-amd64
 [812345.102] Call Trace:
Jan  1 00:00:02 web-01 kernel: [812352.000] Out of memory: Killed process 4121 (java) total-vm:8123456kB
Jan  1 00:00:05 web-01 systemd[1]: app.service: Main process exited, code=killed, status=9/KILL
Jan  1 00:00:06 db-01 postgres[733]: LOG:  unexpected EOF on client connection

== incident 2: 2025-01-01T03:12:01 .. 2025-01-01T03:13:31 (1 triggers, 4 lines)
Jan  1 03:12:44 db-01 kernel: [823412.554] ata2.00: exception Emask 0x0 SAct 0x0 SErr 0x0 action 0x6 frozen
Jan  1 03:12:44 db-01 kernel: [823412.555] ata2.00: failed command: FLUSH CACHE EXT
Jan  1 03:13:01 db-01 kernel: [823429.100] blk_update_request: I/O error, dev sda, sector 1953525
Jan  1 03:13:30 db-01 postgres[733]: PANIC:  could not fsync file "base/16384/2619": Input/output error

== incident 3: 2025-01-01T09:40:17 .. 2025-01-01T09:41:47 (1 triggers, 2 lines)
Jan  1 09:41:17 web-01 app[5120]: segfault at 0 ip 00007f3a2c1d4e2b sp 00007ffd9b5c8a10 error 4 in libfoo.so
Jan  1 09:41:18 web-01 systemd[1]: app.service: Main process exited, code=dumped, status=11/SEGV
"""


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def write(tmp_path, lines, name="syslog"):
    path = tmp_path / name
    path.write_text("".join(x + "\n" for x in lines))
    return str(path)


def ok(*args):
    out = run(*args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def headers(text):
    return [x for x in text.splitlines() if x.startswith("== incident")]


BASIC = [
    "Mar  3 10:00:00 h1 app: start",
    "Mar  3 10:00:40 h1 app: warming up",
    "Mar  3 10:01:00 h1 app: FATAL disk full",
    "Mar  3 10:01:20 h1 app: retrying",
    "Mar  3 10:01:31 h1 app: retry failed",
    "Mar  3 10:05:00 h1 app: quiet",
]


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_exact_output():
    out = run("--pattern", "oom-killer|Out of memory|I/O error|segfault", SAMPLE)
    assert out.returncode == 0, out.stderr
    assert out.stdout == SAMPLE_EXPECTED


def test_default_window_is_60_before_30_after(tmp_path):
    out = ok("--pattern", "FATAL", write(tmp_path, BASIC))
    assert out == (
        "== incident 1: 2024-03-03T10:00:00 .. 2024-03-03T10:01:30 (1 triggers, 4 lines)\n"
        "Mar  3 10:00:00 h1 app: start\n"
        "Mar  3 10:00:40 h1 app: warming up\n"
        "Mar  3 10:01:00 h1 app: FATAL disk full\n"
        "Mar  3 10:01:20 h1 app: retrying\n"
    )


def test_custom_before_and_after(tmp_path):
    out = ok("--pattern", "FATAL", "--before", "0", "--after", "31", write(tmp_path, BASIC))
    assert headers(out) == [
        "== incident 1: 2024-03-03T10:01:00 .. 2024-03-03T10:01:31 (1 triggers, 3 lines)"
    ]
    assert out.splitlines()[1:] == BASIC[2:5]


def test_no_match_exits_1_silently(tmp_path):
    out = run("--pattern", "kernel panic", write(tmp_path, BASIC))
    assert out.returncode == 1
    assert out.stdout == ""


def test_overlapping_windows_merge(tmp_path):
    lines = [
        "May 10 08:00:00 h app: ERR one",
        "May 10 08:00:50 h app: ERR two",
        "May 10 08:01:10 h app: fine",
        "May 10 08:03:00 h app: ERR three",
    ]
    out = ok("--pattern", "ERR", "--before", "10", "--after", "40", write(tmp_path, lines))
    assert headers(out) == [
        "== incident 1: 2024-05-10T07:59:50 .. 2024-05-10T08:01:30 (2 triggers, 3 lines)",
        "== incident 2: 2024-05-10T08:02:50 .. 2024-05-10T08:03:40 (1 triggers, 1 lines)",
    ]


def test_touching_windows_merge_but_gaps_do_not(tmp_path):
    lines = [
        "May 10 08:00:00 h app: ERR a",
        "May 10 08:00:10 h app: ERR b",
        "May 10 08:00:21 h app: ERR c",
    ]
    out = ok("--pattern", "ERR", "--before", "0", "--after", "10", write(tmp_path, lines))
    assert headers(out) == [
        "== incident 1: 2024-05-10T08:00:00 .. 2024-05-10T08:00:20 (2 triggers, 2 lines)",
        "== incident 2: 2024-05-10T08:00:21 .. 2024-05-10T08:00:31 (1 triggers, 1 lines)",
    ]


def test_incidents_separated_by_one_empty_line(tmp_path):
    lines = ["Jun  1 00:00:00 h a: X", "Jun  1 01:00:00 h a: X"]
    out = ok("--pattern", "X", write(tmp_path, lines))
    assert out == (
        "== incident 1: 2024-05-31T23:59:00 .. 2024-06-01T00:00:30 (1 triggers, 1 lines)\n"
        "Jun  1 00:00:00 h a: X\n"
        "\n"
        "== incident 2: 2024-06-01T00:59:00 .. 2024-06-01T01:00:30 (1 triggers, 1 lines)\n"
        "Jun  1 01:00:00 h a: X\n"
    )


def test_continuation_lines_follow_their_parent(tmp_path):
    lines = [
        "  orphan continuation before any stamp MATCH",
        "Jul  4 12:00:00 h app: Traceback (most recent call last):",
        '  File "app.py", line 3, in <module>',
        "ValueError: MATCH here",
        "",
        "Jul  4 12:02:00 h app: later",
    ]
    out = ok("--pattern", "MATCH", write(tmp_path, lines))
    assert out == (
        "== incident 1: 2024-07-04T11:59:00 .. 2024-07-04T12:00:30 (1 triggers, 3 lines)\n"
        "Jul  4 12:00:00 h app: Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "ValueError: MATCH here\n"
    )


def test_year_rollover_and_year_option(tmp_path):
    lines = [
        "Dec 31 23:59:50 h app: BOOM",
        "Jan  1 00:00:15 h app: after midnight",
        "Feb  2 10:00:00 h app: BOOM again",
        "Jan  5 00:00:00 h app: BOOM next year",
    ]
    out = ok("--pattern", "BOOM", "--year", "2019", write(tmp_path, lines))
    assert headers(out) == [
        "== incident 1: 2019-12-31T23:58:50 .. 2020-01-01T00:00:20 (1 triggers, 2 lines)",
        "== incident 2: 2020-02-02T09:59:00 .. 2020-02-02T10:00:30 (1 triggers, 1 lines)",
        "== incident 3: 2021-01-04T23:59:00 .. 2021-01-05T00:00:30 (1 triggers, 1 lines)",
    ]


def test_day_formats(tmp_path):
    lines = ["Aug  7 01:00:00 h a: X", "Aug 7 02:00:00 h a: X", "Aug 07 03:00:00 h a: X", "Aug 17 04:00:00 h a: X"]
    out = ok("--pattern", "X", "--before", "0", "--after", "0", write(tmp_path, lines))
    assert headers(out) == [
        "== incident 1: 2024-08-07T01:00:00 .. 2024-08-07T01:00:00 (1 triggers, 1 lines)",
        "== incident 2: 2024-08-07T02:00:00 .. 2024-08-07T02:00:00 (1 triggers, 1 lines)",
        "== incident 3: 2024-08-07T03:00:00 .. 2024-08-07T03:00:00 (1 triggers, 1 lines)",
        "== incident 4: 2024-08-17T04:00:00 .. 2024-08-17T04:00:00 (1 triggers, 1 lines)",
    ]


def test_host_filter(tmp_path):
    lines = [
        "Sep  9 09:00:00 web app: ERROR upstream timeout",
        "Sep  9 09:00:05 db pg: ERROR too many connections",
        "  db detail: ERROR continuation of db",
        "Sep  9 09:00:10 web app: recovered",
        "Sep  9 09:30:00 db pg: ERROR replication lag",
    ]
    out = ok("--host", "web", "--pattern", "ERROR", write(tmp_path, lines))
    assert out == (
        "== incident 1: 2024-09-09T08:59:00 .. 2024-09-09T09:00:30 (1 triggers, 2 lines)\n"
        "Sep  9 09:00:00 web app: ERROR upstream timeout\n"
        "Sep  9 09:00:10 web app: recovered\n"
    )
    db = ok("--pattern", "ERROR", "--host", "db", write(tmp_path, lines))
    assert headers(db) == [
        "== incident 1: 2024-09-09T08:59:05 .. 2024-09-09T09:00:35 (2 triggers, 2 lines)",
        "== incident 2: 2024-09-09T09:29:00 .. 2024-09-09T09:30:30 (1 triggers, 1 lines)",
    ]


def test_extended_regex_features(tmp_path):
    lines = ["Oct 1 10:00:00 h a: code=500", "Oct 1 11:00:00 h a: code=404", "Oct 1 12:00:00 h a: code=5000"]
    out = ok("--pattern", "code=5[0-9]{2}$", write(tmp_path, lines))
    assert len(headers(out)) == 1 and "code=500\n" in out
    anchored = ok("--pattern", "^Oct 1 1[12]:", write(tmp_path, lines))
    assert len(headers(anchored)) == 2


def test_lines_printed_verbatim(tmp_path):
    lines = ["Nov 11 11:11:11 h a: tabs\there  and   spaces   ", "Nov 11 11:11:12 h a: ünïcødé MATCH"]
    out = ok("--pattern", "MATCH", write(tmp_path, lines))
    assert out.splitlines()[1:] == lines


@pytest.mark.parametrize(
    "args",
    [
        ["--before", "5"],
        ["--pattern", "x"],
        ["--pattern", "(unclosed"],
        ["--pattern", "x", "--before", "-5"],
        ["--pattern", "x", "--after", "ten"],
        ["--pattern", "x", "--year", "20x4"],
    ],
    ids=["no-pattern", "no-file", "bad-regex", "negative-before", "bad-after", "bad-year"],
)
def test_usage_errors_exit_2(tmp_path, args):
    path = write(tmp_path, BASIC)
    full = args + ([path] if args != ["--pattern", "x"] else [])
    out = run(*full)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() != ""


def test_missing_file_exits_2():
    out = run("--pattern", "x", "/nonexistent/syslog")
    assert out.returncode == 2
    assert out.stdout == ""


def test_large_log(tmp_path):
    lines = []
    for i in range(30000):
        h, m, s = (i // 3600) % 24, (i // 60) % 60, i % 60
        msg = "CRIT overheating" if i % 2000 == 1000 else "tick"
        lines.append(f"Feb  1 {h:02d}:{m:02d}:{s:02d} node{i % 3} sensor: {msg}")
    out = ok("--pattern", "CRIT", "--before", "5", "--after", "5", write(tmp_path, lines))
    hs = headers(out)
    assert len(hs) == 15
    assert hs[0] == "== incident 1: 2024-02-01T00:16:35 .. 2024-02-01T00:16:45 (1 triggers, 11 lines)"
    assert len(out.splitlines()) == 15 * 12 + 14
