"""python3 -m cronlib EXPRESSION [--after YYYY-MM-DDTHH:MM] [--count N]"""

import argparse
import sys
from datetime import datetime

from cronlib.parser import CronError, parse
from cronlib.schedule import iter_runs


def main(argv=None):
    ap = argparse.ArgumentParser(prog="cronlib")
    ap.add_argument("expression")
    ap.add_argument("--after", default=None, help="YYYY-MM-DDTHH:MM (default: now)")
    ap.add_argument("--count", type=int, default=5)
    args = ap.parse_args(argv)
    if args.count < 1:
        print("error: --count must be at least 1", file=sys.stderr)
        return 2
    try:
        after = datetime.strptime(args.after, "%Y-%m-%dT%H:%M") if args.after else datetime.now()
    except ValueError:
        print(f"error: bad --after value {args.after!r}", file=sys.stderr)
        return 2
    try:
        spec = parse(args.expression)
    except CronError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    runs = iter_runs(spec, after, args.count)
    for run in runs:
        print(run.strftime("%Y-%m-%d %H:%M %a"))
    if not runs:
        print("never", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
