"""When does a cron expression fire?"""

from datetime import date, datetime, timedelta

from cronlib.parser import CronSpec, parse

HORIZON_YEARS = 8


def _day_matches(spec, day):
    dom = day.day in spec.days
    dow = day.weekday() in spec.weekdays
    if spec.days_restricted:
        return dom
    if spec.weekdays_restricted:
        return dow
    return True


def next_run(expression, after):
    """The first minute strictly after `after` (a naive datetime) at which the expression
    fires, or None if it does not fire before the end of year after.year + 8."""
    spec = expression if isinstance(expression, CronSpec) else parse(expression)
    start = after.replace(second=0, microsecond=0)
    day = start.date()
    last = date(after.year + HORIZON_YEARS, 12, 31)
    while day <= last:
        if day.month in spec.months and _day_matches(spec, day):
            for hour in sorted(spec.hours):
                for minute in sorted(spec.minutes):
                    candidate = datetime(day.year, day.month, day.day, hour, minute)
                    if candidate >= start:
                        return candidate
        day += timedelta(days=1)
    return None


def iter_runs(expression, after, count):
    """The next `count` run times after `after`, in order (fewer if the horizon ends)."""
    spec = expression if isinstance(expression, CronSpec) else parse(expression)
    runs = []
    current = after
    while len(runs) < count:
        current = next_run(spec, current)
        if current is None:
            break
        runs.append(current)
    return runs
