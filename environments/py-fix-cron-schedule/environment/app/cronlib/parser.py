"""Parse five-field cron expressions (and @macros) into sets of allowed values."""

from dataclasses import dataclass

MONTHS = {name: i for i, name in enumerate(
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], 1)}
DAYS = {name: i for i, name in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"])}
MACROS = {
    "@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
}
# (name, lowest, highest, names)
FIELDS = [("minute", 0, 59, None), ("hour", 0, 23, None), ("day of month", 1, 31, None),
          ("month", 1, 12, MONTHS), ("day of week", 0, 7, DAYS)]


class CronError(ValueError):
    """An invalid cron expression."""


@dataclass(frozen=True)
class CronSpec:
    minutes: frozenset
    hours: frozenset
    days: frozenset
    months: frozenset
    weekdays: frozenset        # 0 = Sunday ... 6 = Saturday
    days_restricted: bool      # the day-of-month field does not start with '*'
    weekdays_restricted: bool  # the day-of-week field does not start with '*'


def _value(text, field):
    name, lo, hi, names = field
    if names and text in names:
        return names[text]
    if not text.isdigit():
        raise CronError(f"{name}: not a number or name: {text!r}")
    value = int(text)
    if not lo <= value <= hi:
        raise CronError(f"{name}: {value} is outside {lo}-{hi}")
    return value


def _field(text, field):
    name, lo, hi, _ = field
    values = set()
    for item in text.split(","):
        if not item:
            raise CronError(f"{name}: empty list item in {text!r}")
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) < 1:
                raise CronError(f"{name}: bad step {step_text!r}")
            step = int(step_text)
        if base == "*":
            values.update(range(lo, hi + 1, step))
        elif "-" in base:
            a, _, b = base.partition("-")
            start, end = _value(a, field), _value(b, field)
            if start > end:
                raise CronError(f"{name}: reversed range {base!r}")
            values.update(range(start, end, step))
        else:
            values.add(_value(base, field))
    return values


def parse(expression):
    """A CronSpec for a five-field expression or an @macro; CronError when invalid."""
    text = expression.strip()
    text = MACROS.get(text.lower(), text) if text.startswith("@") else text
    if text.startswith("@"):
        raise CronError(f"unknown macro {expression.strip()!r}")
    parts = text.split()
    if len(parts) != 5:
        raise CronError(f"expected 5 fields, got {len(parts)}")
    minutes, hours, days, months, weekdays = (_field(p, f) for p, f in zip(parts, FIELDS))
    return CronSpec(frozenset(minutes), frozenset(hours), frozenset(days), frozenset(months),
                    frozenset(weekdays), not parts[2].startswith("*"), not parts[4].startswith("*"))
