import datetime as dt
import os
import random
import re
import subprocess

import pytest

TOOL = "/app/prune-backups"
NAME_RE = re.compile(r"^([A-Za-z0-9._-]+)-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})\.tar\.gz$")


def run(*args):
    return subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=60)


def make(tmp_path, names, sub="b"):
    d = tmp_path / sub
    d.mkdir()
    for name in names:
        (d / name).write_text(name + "\n")
    return d


def reference(names, days=7, weeks=4, months=6):
    """The policy from the instruction, written independently."""
    series = {}
    for name in names:
        m = NAME_RE.match(name)
        if not m:
            continue
        try:
            t = dt.datetime(*map(int, m.groups()[1:]))
        except ValueError:
            continue
        series.setdefault(m.group(1), []).append((t, name))
    lines = []
    for s in sorted(series, key=lambda x: x.encode()):
        items = sorted(series[s], reverse=True)
        reasons = {name: [] for _, name in items}
        for rule, key, limit in (
            ("daily", lambda t: t.date(), days),
            ("weekly", lambda t: t.isocalendar()[:2], weeks),
            ("monthly", lambda t: (t.year, t.month), months),
        ):
            seen = []
            for t, name in items:
                k = key(t)
                if k not in seen:
                    seen.append(k)
                    if len(seen) <= limit:
                        reasons[name].append(rule)
        for t, name in reversed(items):
            r = reasons[name]
            lines.append(f"keep {name} ({','.join(r)})" if r else f"delete {name}")
    return lines


def daily(series, start, count, hour=2):
    return [f"{series}-{(start + dt.timedelta(days=i)):%Y%m%d}-{hour:02d}0000.tar.gz" for i in range(count)]


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_daily_only_keeps_newest_days(tmp_path):
    names = daily("db", dt.date(2024, 3, 1), 10)
    d = make(tmp_path, names)
    out = run("-d", 3, "-w", 0, "-m", 0, d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"delete {n}" for n in names[:7]] + [
        f"keep {n} (daily)" for n in names[7:]
    ]
    assert sorted(os.listdir(d)) == names[7:]


def test_newest_backup_of_a_day_wins(tmp_path):
    names = [
        "db-20240309-230000.tar.gz",
        "db-20240310-010000.tar.gz",
        "db-20240310-130000.tar.gz",
        "db-20240310-235959.tar.gz",
    ]
    d = make(tmp_path, names)
    out = run("-d", 1, "-w", 0, "-m", 0, d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "delete db-20240309-230000.tar.gz",
        "delete db-20240310-010000.tar.gz",
        "delete db-20240310-130000.tar.gz",
        "keep db-20240310-235959.tar.gz (daily)",
    ]


def test_iso_weeks_span_new_year(tmp_path):
    names = [
        "db-20201228-010000.tar.gz",
        "db-20210103-010000.tar.gz",
        "db-20210104-010000.tar.gz",
        "db-20210110-010000.tar.gz",
    ]
    d = make(tmp_path, names)
    out = run("-d", 0, "-w", 3, "-m", 0, d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "delete db-20201228-010000.tar.gz",
        "keep db-20210103-010000.tar.gz (weekly)",
        "delete db-20210104-010000.tar.gz",
        "keep db-20210110-010000.tar.gz (weekly)",
    ]


def test_monthly_with_leap_day(tmp_path):
    names = [
        "db-20240115-000000.tar.gz",
        "db-20240131-120000.tar.gz",
        "db-20240229-120000.tar.gz",
        "db-20240301-000000.tar.gz",
    ]
    d = make(tmp_path, names)
    out = run("-m", 2, "-d", 0, "-w", 0, d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "delete db-20240115-000000.tar.gz",
        "delete db-20240131-120000.tar.gz",
        "keep db-20240229-120000.tar.gz (monthly)",
        "keep db-20240301-000000.tar.gz (monthly)",
    ]


def test_reasons_are_combined_in_fixed_order(tmp_path):
    names = ["db-20240105-000000.tar.gz", "db-20240210-000000.tar.gz", "db-20240211-000000.tar.gz"]
    d = make(tmp_path, names)
    out = run(d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "keep db-20240105-000000.tar.gz (daily,weekly,monthly)",
        "keep db-20240210-000000.tar.gz (daily)",
        "keep db-20240211-000000.tar.gz (daily,weekly,monthly)",
    ]


def test_series_are_independent_and_ordered_bytewise(tmp_path):
    names = (
        daily("db", dt.date(2024, 5, 1), 3)
        + daily("db-archive", dt.date(2024, 1, 1), 3)
        + daily("Zeta", dt.date(2024, 2, 1), 2)
        + daily("app", dt.date(2024, 4, 1), 2)
    )
    d = make(tmp_path, names)
    out = run("-d", 1, "-w", 0, "-m", 0, d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == reference(names, 1, 0, 0)
    assert [line.split()[1].rsplit("-", 2)[0] for line in out.stdout.splitlines()] == (
        ["Zeta"] * 2 + ["app"] * 2 + ["db"] * 3 + ["db-archive"] * 3
    )
    assert len(os.listdir(d)) == 4


def test_non_backups_are_never_touched_or_printed(tmp_path):
    good = ["db-20240101-000000.tar.gz"]
    junk = [
        "db-20230229-010000.tar.gz",
        "db-20240101-240000.tar.gz",
        "db-20240101-006000.tar.gz",
        "db-20241301-000000.tar.gz",
        "db-20240101-000000.tar.gz.partial",
        "-20240101-000000.tar.gz",
        "db 2-20240101-000000.tar.gz",
        "db-20240101-000000.tgz",
        "notes.txt",
    ]
    d = make(tmp_path, good + junk)
    (d / "db-20240102-000000.tar.gz").mkdir()
    (d / "sub").mkdir()
    (d / "sub" / "db-20200101-000000.tar.gz").write_text("old")
    out = run("-d", 1, "-w", 0, "-m", 0, d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["keep db-20240101-000000.tar.gz (daily)"]
    assert sorted(os.listdir(d)) == sorted(good + junk + ["db-20240102-000000.tar.gz", "sub"])
    assert (d / "sub" / "db-20200101-000000.tar.gz").exists()


def test_dry_run_deletes_nothing_and_prints_the_same(tmp_path):
    names = daily("db", dt.date(2024, 1, 1), 60)
    d1 = make(tmp_path, names, "one")
    d2 = make(tmp_path, names, "two")
    dry = run("-n", "-d", 5, "-w", 2, "-m", 1, d1)
    real = run("-d", 5, "-w", 2, "-m", 1, d2)
    assert dry.returncode == 0 and real.returncode == 0
    assert dry.stdout == real.stdout
    assert sorted(os.listdir(d1)) == names
    assert len(os.listdir(d2)) < len(names)


def test_options_in_any_order(tmp_path):
    names = daily("db", dt.date(2024, 1, 1), 40)
    d = make(tmp_path, names)
    out = run("-m", 1, "-n", "-w", 0, "-d", 2, d)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == reference(names, 2, 0, 1)
    assert sorted(os.listdir(d)) == names


def test_kept_files_keep_their_contents(tmp_path):
    names = daily("db", dt.date(2024, 1, 1), 20)
    d = make(tmp_path, names)
    run("-d", 3, "-w", 1, "-m", 1, d)
    left = sorted(os.listdir(d))
    assert left == names[-3:]
    for n in left:
        assert (d / n).read_text() == n + "\n"


def test_empty_directory_is_fine(tmp_path):
    d = make(tmp_path, [])
    out = run(d)
    assert out.returncode == 0
    assert out.stdout == ""


def test_large_mixed_set_matches_policy(tmp_path):
    rng = random.Random(7)
    names = set()
    for series in ("alpha", "beta.v2", "gamma_x"):
        t = dt.datetime(2022, 11, 20, 0, 0, 0)
        for _ in range(220):
            t += dt.timedelta(hours=rng.randrange(2, 70), seconds=rng.randrange(0, 3600))
            names.add(f"{series}-{t:%Y%m%d-%H%M%S}.tar.gz")
    names = sorted(names)
    d = make(tmp_path, names)
    out = run("-d", 10, "-w", 6, "-m", 12, d)
    assert out.returncode == 0, out.stderr
    want = reference(names, 10, 6, 12)
    assert out.stdout.splitlines() == want
    kept = sorted(line.split()[1] for line in want if line.startswith("keep "))
    assert sorted(os.listdir(d)) == kept


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["/nonexistent/backups"],
        ["-d", "x", "DIR"],
        ["-w", "-1", "DIR"],
        ["-m", "1.5", "DIR"],
        ["-z", "DIR"],
        ["DIR", "DIR"],
        ["DIR", "-d"],
    ],
    ids=["no-args", "missing-dir", "non-integer", "negative", "fraction", "unknown-option",
         "extra-arg", "dangling-option"],
)
def test_usage_errors_exit_2(tmp_path, args):
    names = daily("db", dt.date(2024, 1, 1), 30)
    d = make(tmp_path, names)
    out = run(*[str(d) if a == "DIR" else a for a in args])
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert sorted(os.listdir(d)) == names


def test_all_zero_policy_is_refused(tmp_path):
    names = daily("db", dt.date(2024, 1, 1), 5)
    d = make(tmp_path, names)
    out = run("-d", 0, "-w", 0, "-m", 0, d)
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert sorted(os.listdir(d)) == names


def test_missing_option_value(tmp_path):
    d = make(tmp_path, daily("db", dt.date(2024, 1, 1), 3))
    out = run(d, "-d")
    assert out.returncode == 2
    out = run("-d")
    assert out.returncode == 2


def sample_names():
    rng = random.Random(20240607)
    names = []
    start = dt.datetime(2023, 9, 1, 1, 30, 0)
    for series, step_h in (("db", 24), ("web-prod", 31)):
        t = start
        while t < dt.datetime(2024, 6, 10):
            if rng.random() < 0.85:
                names.append(f"{series}-{t:%Y%m%d-%H%M%S}.tar.gz")
            t += dt.timedelta(hours=step_h, minutes=rng.randrange(0, 50))
    return names


def test_sample_directory_was_pruned_with_defaults():
    left = set(os.listdir("/app/backups"))
    want = reference(sample_names())
    kept = {line.split()[1] for line in want if line.startswith("keep ")}
    extras = {"README.txt", "db-20240230-010000.tar.gz", "db-20240601-250000.tar.gz",
              "db-20240601-010000.tar.gz.partial", "web-prod-latest.tar.gz",
              "db-20240609-000000.tar.gz"}
    assert left == kept | extras
    assert os.path.isdir("/app/backups/db-20240609-000000.tar.gz")
