#!/usr/bin/env bash
set -euo pipefail
cat > /app/stock-report <<'PY'
#!/usr/bin/env python3
"""Replay warehouse stock events into a final stock position."""
import calendar
import gzip
import json
import os
import re
import sys
from datetime import datetime, timezone
from fractions import Fraction

TS = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
COST = re.compile(r"^(\d+)(?:\.(\d{1,2}))?$")
FIELDS = {
    "receive": ("sku", "warehouse", "qty"),
    "ship": ("sku", "warehouse", "qty"),
    "transfer": ("sku", "from", "to", "qty"),
    "adjust": ("sku", "warehouse", "counted"),
    "void": ("target",),
}
STRINGS = ("sku", "warehouse", "from", "to", "target")


def fail(msg):
    print(f"stock-report: {msg}", file=sys.stderr)
    sys.exit(2)


def instant(ts):
    """Exact UTC instant (seconds since the epoch as a Fraction), or None."""
    m = TS.match(ts) if isinstance(ts, str) else None
    if not m:
        return None
    y, mo, d, hh, mi, ss = (int(g) for g in m.groups()[:6])
    try:
        base = datetime(y, mo, d, hh, mi, ss, tzinfo=timezone.utc)
    except ValueError:
        return None
    seconds = Fraction(calendar.timegm(base.utctimetuple()))
    if m.group(7):
        seconds += Fraction(m.group(7)[1:]) / 10 ** (len(m.group(7)) - 1)
    zone = m.group(8)
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            return None
        offset = oh * 3600 + om * 60
        seconds -= offset if zone[0] == "+" else -offset
    return seconds


def load_catalog(path):
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        fail(f"cannot read catalog {path}: {exc}")
    if not isinstance(data, list):
        fail("catalog must be a JSON array")
    costs = {}
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("sku"), str) \
                or not isinstance(item.get("unit_cost"), str):
            fail("catalog entries need string sku and unit_cost")
        m = COST.match(item["unit_cost"])
        if not m:
            fail(f"bad unit_cost for {item['sku']}")
        costs[item["sku"]] = int(m.group(1)) * 100 + int((m.group(2) or "0").ljust(2, "0"))
    return costs


def read_lines(directory):
    names = sorted(n for n in os.listdir(directory)
                   if n.endswith(".ndjson") or n.endswith(".ndjson.gz"))
    for name in names:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rb") as fh:
            for raw in fh.read().decode("utf-8", errors="replace").split("\n"):
                if raw.strip():
                    yield raw


def valid(ev):
    if not isinstance(ev, dict) or not isinstance(ev.get("id"), str):
        return False
    if ev.get("type") not in FIELDS or instant(ev.get("ts")) is None:
        return False
    for field in FIELDS[ev["type"]]:
        if field not in ev:
            return False
        if field in STRINGS and not isinstance(ev[field], str):
            return False
    return True


def is_int(value, minimum):
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def main(argv):
    if len(argv) != 3:
        fail("usage: stock-report CATALOG EVENTS_DIR")
    costs = load_catalog(argv[1])
    if not os.path.isdir(argv[2]):
        fail(f"not a directory: {argv[2]}")
    malformed = 0
    copies = {}
    for raw in read_lines(argv[2]):
        try:
            ev = json.loads(raw)
        except ValueError:
            ev = None
        if not valid(ev):
            malformed += 1
            continue
        copies.setdefault(ev["id"], []).append(ev)
    duplicates, conflicts, events = 0, [], {}
    for eid, versions in copies.items():
        if all(v == versions[0] for v in versions):
            duplicates += len(versions) - 1
            events[eid] = versions[0]
        else:
            conflicts.append(eid)

    def order(ev):
        return (instant(ev["ts"]), ev["id"])

    rejected = []
    voided = set()
    for ev in events.values():
        if ev["type"] == "void":
            target = events.get(ev["target"])
            if target is None or target["type"] == "void":
                rejected.append((order(ev), ev["id"], "unknown_target"))
            else:
                voided.add(target["id"])
    replay = sorted((ev for ev in events.values()
                     if ev["type"] != "void" and ev["id"] not in voided), key=order)
    stock = {}
    variances = []
    for ev in replay:
        kind, sku = ev["type"], ev["sku"]
        reason = None
        if sku not in costs:
            reason = "unknown_sku"
        elif kind == "adjust" and not is_int(ev["counted"], 0):
            reason = "invalid_quantity"
        elif kind != "adjust" and not is_int(ev["qty"], 1):
            reason = "invalid_quantity"
        elif kind == "transfer" and ev["from"] == ev["to"]:
            reason = "invalid_transfer"
        elif kind in ("ship", "transfer"):
            source = ev["warehouse"] if kind == "ship" else ev["from"]
            if stock.get((sku, source), 0) < ev["qty"]:
                reason = "insufficient_stock"
        if reason:
            rejected.append((order(ev), ev["id"], reason))
            continue
        if kind == "receive":
            key = (sku, ev["warehouse"])
            stock[key] = stock.get(key, 0) + ev["qty"]
        elif kind == "ship":
            stock[(sku, ev["warehouse"])] -= ev["qty"]
        elif kind == "transfer":
            stock[(sku, ev["from"])] -= ev["qty"]
            key = (sku, ev["to"])
            stock[key] = stock.get(key, 0) + ev["qty"]
        else:
            key = (sku, ev["warehouse"])
            before = stock.get(key, 0)
            if before != ev["counted"]:
                variances.append({"id": ev["id"], "sku": sku, "warehouse": ev["warehouse"],
                                  "expected": before, "counted": ev["counted"]})
            stock[key] = ev["counted"]
    out_stock, cents = {}, {}
    for (sku, wh), qty in sorted(stock.items()):
        if qty:
            out_stock.setdefault(sku, {})[wh] = qty
            cents[wh] = cents.get(wh, 0) + qty * costs[sku]
    rejected.sort()
    report = {
        "stock": out_stock,
        "value": {wh: f"{c // 100}.{c % 100:02d}" for wh, c in sorted(cents.items())},
        "variances": variances,
        "rejected": [{"id": eid, "reason": reason} for _, eid, reason in rejected],
        "duplicates": duplicates,
        "conflicts": sorted(conflicts),
        "malformed": malformed,
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/stock-report
