#!/usr/bin/env bash
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path


def edit(path, old, new):
    p = Path(path)
    s = p.read_text()
    assert s.count(old) == 1, (path, old)
    p.write_text(s.replace(old, new))


P, S = "cronlib/parser.py", "cronlib/schedule.py"
# Month and weekday names in any letter case.
edit(P, """    if names and text in names:
        return names[text]""", """    if names and text.upper() in names:
        return names[text.upper()]""")
# Inclusive ranges, and N/STEP runs to the field maximum.
edit(P, """        if base == "*":
            values.update(range(lo, hi + 1, step))
        elif "-" in base:
            a, _, b = base.partition("-")
            start, end = _value(a, field), _value(b, field)
            if start > end:
                raise CronError(f"{name}: reversed range {base!r}")
            values.update(range(start, end, step))
        else:
            values.add(_value(base, field))""", """        if base == "*":
            start, end = lo, hi
        elif "-" in base:
            a, _, b = base.partition("-")
            start, end = _value(a, field), _value(b, field)
            if start > end:
                raise CronError(f"{name}: reversed range {base!r}")
        else:
            start = _value(base, field)
            end = hi if slash else start
        values.update(range(start, end + 1, step))""")
# 7 is Sunday too.
edit(P, """    return CronSpec(frozenset(minutes)""", """    weekdays = {0 if d == 7 else d for d in weekdays}
    return CronSpec(frozenset(minutes)""")
# Cron counts weekdays from Sunday = 0; both day fields restricted means OR, else AND.
edit(S, "    dow = day.weekday() in spec.weekdays", "    dow = day.isoweekday() % 7 in spec.weekdays")
edit(S, """    if spec.days_restricted:
        return dom
    if spec.weekdays_restricted:
        return dow
    return True""", """    if spec.days_restricted and spec.weekdays_restricted:
        return dom or dow
    return dom and dow""")
# Strictly after: start at the next whole minute.
edit(S, "    start = after.replace(second=0, microsecond=0)\n",
     "    start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)\n")
PY
