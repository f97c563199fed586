"""cronlib's tests. The package runs in a child process (app_bridge), never in pytest's."""

import random
import subprocess
import sys
from datetime import date, datetime, timedelta

import pytest
from app_bridge import app_call, app_calls, app_calls_shared, raised


def cli(*args):
    return subprocess.run([sys.executable, "-m", "cronlib", *args], capture_output=True, text=True,
                          cwd="/app", timeout=60)


def dt(text):
    return datetime.strptime(text, "%Y-%m-%d %H:%M")


# ---- independent reference ----
NAMES = [None, None, None,
         {m: i for i, m in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split(), 1)},
         {d: i for i, d in enumerate("SUN MON TUE WED THU FRI SAT".split())}]
LIMITS = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def ref_field(text, k):
    lo, hi = LIMITS[k]
    out = set()
    for item in text.split(","):
        base, _, step = item.partition("/")
        step = int(step) if step else 1
        conv = lambda t: NAMES[k][t.upper()] if NAMES[k] and t.upper() in NAMES[k] else int(t)
        if base == "*":
            a, b = lo, hi
        elif "-" in base:
            a, b = (conv(x) for x in base.split("-"))
        else:
            a = conv(base)
            b = hi if "/" in item else a
        out |= set(range(a, b + 1, step))
    return out


def ref_runs(expr, after, count):
    f = expr.split()
    sets = [ref_field(f[k], k) for k in range(5)]
    dows = {0 if d == 7 else d for d in sets[4]}
    rd, rw = not f[2].startswith("*"), not f[4].startswith("*")
    runs, t = [], after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    day = t.date()
    while len(runs) < count and day <= date(after.year + 8, 12, 31):
        dm, wm = day.day in sets[2], (day.weekday() + 1) % 7 in dows
        ok = (dm or wm) if (rd and rw) else (dm and wm)
        if ok and day.month in sets[3]:
            for h in sorted(sets[1]):
                for m in sorted(sets[0]):
                    c = datetime(day.year, day.month, day.day, h, m)
                    if c >= t and len(runs) < count:
                        runs.append(c)
        day += timedelta(days=1)
    return runs


# ---- parsing ----
def test_package_imports_from_app():
    assert app_call("package_file").startswith("/app/cronlib/")


def test_parse_sets():
    s = app_call("parse", "  */15\t9-17  1,15,31 */4 1-5 ")
    assert s.minutes == {0, 15, 30, 45}
    assert s.hours == set(range(9, 18))
    assert s.days == {1, 15, 31}
    assert s.months == {1, 5, 9}
    assert s.weekdays == {1, 2, 3, 4, 5}
    assert s.days_restricted and s.weekdays_restricted


def test_ranges_are_inclusive_with_steps():
    a, b, c, d = app_calls(("parse", "10-30/7 0-23/6 * * *"), ("parse", "10-30/7 0-23/6 * * *"),
                           ("parse", "58-59 * * 11-12 *"), ("parse", "58-59 * * * *"))
    assert a.minutes == {10, 17, 24}
    assert b.hours == {0, 6, 12, 18}
    assert c.months == {11, 12}
    assert d.minutes == {58, 59}


def test_value_with_step_runs_to_max():
    s = app_call("parse", "5/20 22/1 * 10/2 *")
    assert s.minutes == {5, 25, 45}
    assert s.hours == {22, 23}
    assert s.months == {10, 12}


def test_names_any_case():
    s = app_call("parse", "0 0 * jan,Mar-may mon-Wed,sat")
    assert s.months == {1, 3, 4, 5}
    assert s.weekdays == {1, 2, 3, 6}


def test_sunday_as_seven():
    a, b, c = app_calls(("parse", "0 0 * * 7"), ("parse", "0 0 * * 5-7"), ("parse", "0 0 * * SUN,7,0"))
    assert a.weekdays == {0}
    assert b.weekdays == {0, 5, 6}
    assert c.weekdays == {0}


def test_star_flags():
    s, t = app_calls(("parse", "0 0 */2 * *"), ("parse", "0 0 1-31 * 0-7"))
    assert not s.days_restricted and not s.weekdays_restricted
    assert t.days_restricted and t.weekdays_restricted


# The cases of a parametrized test share one child process (app_calls_shared).
MACROS = [("@hourly", "0 * * * *"), ("@DAILY", "0 0 * * *"), ("@midnight", "0 0 * * *"),
          ("@weekly", "0 0 * * 0"), ("@monthly", "0 0 1 * *"), ("@Yearly", "0 0 1 1 *"),
          ("@annually", "0 0 1 1 *")]


@pytest.mark.parametrize("macro, fields", MACROS)
def test_macros(macro, fields):
    [equal] = app_calls_shared(MACROS, (macro, fields), lambda case: [("parse_equal", *case)])
    assert equal


INVALID = ["", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *",
           "* * * 13 *", "* * * * 8", "5-1 * * * *", "*/0 * * * *", "*/x * * * *", "1,,2 * * * *",
           "* * * FOO *", "* * * * MONDAY", "@reboot", "@every5m", "-1 * * * *", "1- * * * *"]


@pytest.mark.parametrize("bad", INVALID,
                         ids=["empty", "four-fields", "six-fields", "minute-60", "hour-24", "dom-0",
                              "dom-32", "month-13", "dow-8", "reversed", "step-0", "step-x", "empty-item",
                              "bad-month-name", "long-day-name", "reboot", "unknown-macro", "negative",
                              "open-range"])
def test_invalid_expressions(bad):
    result, cron_error = app_calls_shared(INVALID, bad, lambda bad: [("parse", bad), ("CronError",)])
    assert raised(result, cron_error), result
    assert cron_error.is_subclass(ValueError)


# ---- schedule ----
def test_next_run_strictly_after():
    a, b, c = app_calls(("next_run", "* * * * *", datetime(2024, 3, 10, 12, 0)),
                        ("next_run", "* * * * *", datetime(2024, 3, 10, 12, 0, 30, 5)),
                        ("next_run", "30 12 * * *", datetime(2024, 3, 10, 12, 30)))
    assert a == dt("2024-03-10 12:01")
    assert b == dt("2024-03-10 12:01")
    assert c == dt("2024-03-11 12:30")


def test_weekdays_fire_on_right_days():
    runs, sunday, seven = app_calls(
        ("iter_runs", "*/20 9-17 * * MON-FRI", datetime(2024, 3, 8, 16, 30), 6),
        ("next_run", "0 8 * * 0", datetime(2024, 3, 10, 9, 0)),
        ("next_run", "0 8 * * 7", datetime(2024, 3, 11, 0, 0)))
    assert runs == [dt("2024-03-08 16:40"), dt("2024-03-08 17:00"), dt("2024-03-08 17:20"),
                    dt("2024-03-08 17:40"), dt("2024-03-11 09:00"), dt("2024-03-11 09:20")]
    assert sunday == dt("2024-03-17 08:00")
    assert seven.weekday() == 6


def test_day_of_month_or_day_of_week():
    runs, runs2 = app_calls(("iter_runs", "0 0 13 * FRI", datetime(2024, 9, 1), 4),
                            ("iter_runs", "0 0 1 * MON", datetime(2024, 9, 29), 3))
    assert runs == [dt("2024-09-06 00:00"), dt("2024-09-13 00:00"), dt("2024-09-20 00:00"),
                    dt("2024-09-27 00:00")]
    assert runs2 == [dt("2024-09-30 00:00"), dt("2024-10-01 00:00"), dt("2024-10-07 00:00")]


def test_star_step_day_field_is_and():
    runs, runs2 = app_calls(("iter_runs", "0 0 */10 * MON", datetime(2024, 1, 1), 3),
                            ("iter_runs", "0 0 1-7 * */3", datetime(2024, 1, 1), 3))
    assert runs == [dt("2024-03-11 00:00"), dt("2024-04-01 00:00"), dt("2024-07-01 00:00")]
    assert runs2 == [dt("2024-01-03 00:00"), dt("2024-01-06 00:00"), dt("2024-01-07 00:00")]


def test_month_end_leap_year_and_new_year():
    a, b, c, d = app_calls(("next_run", "0 0 29 2 *", datetime(2024, 3, 1)),
                           ("next_run", "0 0 29 2 *", datetime(2097, 3, 1)),
                           ("next_run", "59 23 31 12 *", datetime(2024, 12, 31, 23, 59)),
                           ("next_run", "0 0 31 * *", datetime(2024, 4, 1)))
    assert a == dt("2028-02-29 00:00")
    assert b == dt("2104-02-29 00:00")
    assert c == dt("2025-12-31 23:59")
    assert d == dt("2024-05-31 00:00")


def test_never_returns_none():
    never, no_runs = app_calls(("next_run", "0 0 30 2 *", datetime(2024, 1, 1)),
                               ("iter_runs", "0 0 31 4,6,9,11 *", datetime(2024, 1, 1), 3))
    assert never is None
    assert no_runs == []


def test_iter_runs_increasing_and_count():
    runs, of_spec = app_calls(("iter_runs", "@hourly", datetime(2024, 2, 28, 22, 15), 5),
                              ("iter_runs_of_spec", "15 10 * * *", datetime(2024, 1, 1), 3))
    assert runs == [dt("2024-02-28 23:00"), dt("2024-02-29 00:00"), dt("2024-02-29 01:00"),
                    dt("2024-02-29 02:00"), dt("2024-02-29 03:00")]
    assert of_spec == [
        dt("2024-01-01 10:15"), dt("2024-01-02 10:15"), dt("2024-01-03 10:15")]


def test_random_expressions_match_reference():
    rnd = random.Random(42)
    pieces = [["*", "*/7", "0", "5-10", "15,45", "5/20", "50-59/3"],
              ["*", "0", "9-17", "*/6", "23", "1,13"],
              ["*", "1", "15", "28-31", "*/10", "13"],
              ["*", "2", "jan-mar", "*/5", "Dec", "6-8"],
              ["*", "mon-fri", "0", "7", "SAT,SUN", "2-4", "*/3"]]
    cases = []
    for _ in range(120):
        expr = " ".join(rnd.choice(p) for p in pieces)
        after = datetime(rnd.randint(2020, 2030), rnd.randint(1, 12), rnd.randint(1, 28),
                         rnd.randint(0, 23), rnd.randint(0, 59))
        cases.append((expr, after))
    results = app_calls(*[("iter_runs", expr, after, 5) for expr, after in cases])
    for (expr, after), runs in zip(cases, results, strict=True):
        assert runs == ref_runs(expr, after, 5), (expr, after)


def test_cli_output():
    res = cli("0 9 * * mon", "--after", "2024-03-08T16:30", "--count", "2")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "2024-03-11 09:00 Mon\n2024-03-18 09:00 Mon\n"


def test_cli_never_and_errors():
    res = cli("0 0 30 2 *", "--after", "2024-01-01T00:00", "--count", "1")
    assert res.returncode == 1 and "never" in res.stderr and res.stdout == ""
    res = cli("0 0 * * 8", "--after", "2024-01-01T00:00")
    assert res.returncode == 2 and res.stderr.startswith("error:")
