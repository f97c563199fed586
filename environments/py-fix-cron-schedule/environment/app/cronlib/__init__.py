"""cronlib: parse cron expressions and compute when they fire next."""

from cronlib.parser import CronError, CronSpec, parse
from cronlib.schedule import iter_runs, next_run

__all__ = ["CronError", "CronSpec", "iter_runs", "next_run", "parse"]
