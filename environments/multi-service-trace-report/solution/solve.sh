#!/usr/bin/env bash
set -euo pipefail
cat > /app/trace <<'PY'
#!/usr/bin/env python3
"""Correlate gateway and backend logs by request id into one JSON report."""
import json
import os
import re
import sys
from datetime import datetime, timedelta, timezone

MONTHS = {m: i for i, m in enumerate(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
HEX = re.compile(r"^[0-9a-fA-F]+$")
GATEWAY = re.compile(
    r'^\[(\d{2})/([A-Z][a-z]{2})/(\d{4}):(\d{2}):(\d{2}):(\d{2})\.(\d{3}) ([+-])(\d{2})(\d{2})\] '
    r'"(\S+) (\S+) (\S+)" (\d{3}) rt=(\d+)\.(\d{3}) rid=(\S+)$')
ORDERS = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}),(\d{3}) "
    r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) \[req=([^\]]*)\] (\S+) - (.*)$")
ORDERS_DATE = re.compile(r"^\d{4}-\d{2}-\d{2} ")
PAYMENTS = re.compile(
    r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3}) (\S+) (\S+): (.*)$")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def iso(ms):
    t = EPOCH + timedelta(milliseconds=ms)
    return f"{t:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def to_ms(dt):
    return (dt - EPOCH) // timedelta(milliseconds=1)


def lines_of(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read().split("\n")


def logfmt(text):
    out, i, n = {}, 0, len(text)
    while i < n:
        while i < n and text[i] == " ":
            i += 1
        start = i
        while i < n and text[i] not in " =":
            i += 1
        key = text[start:i]
        if i >= n or text[i] != "=":
            return None if key else out
        i += 1
        if i < n and text[i] == '"':
            i += 1
            buf = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(text[i])
                i += 1
            if i >= n:
                return None
            i += 1
            out[key] = "".join(buf)
        else:
            start = i
            while i < n and text[i] != " ":
                i += 1
            out[key] = text[start:i]
    return out


def parse_gateway(lines, skipped):
    requests = {}
    year = None
    for line in lines:
        if not line:
            continue
        m = GATEWAY.match(line)
        if not m or m.group(2) not in MONTHS or not HEX.match(m.group(17)):
            skipped[0] += 1
            continue
        day, mon, yr, hh, mi, ss, mss, sign, oh, om = m.groups()[:10]
        method, path, _proto, status, rt_s, rt_ms, rid = m.groups()[10:]
        try:
            offset = timedelta(hours=int(oh), minutes=int(om)) * (1 if sign == "+" else -1)
            local = datetime(int(yr), MONTHS[mon], int(day), int(hh), int(mi), int(ss),
                             int(mss) * 1000, tzinfo=timezone(offset))
        except ValueError:
            skipped[0] += 1
            continue
        if year is None:
            year = int(yr)
        end = to_ms(local)
        duration = int(rt_s) * 1000 + int(rt_ms)
        requests[rid.lower()] = {
            "request_id": rid.lower(), "method": method, "path": path,
            "status": int(status), "start": end - duration, "end": end,
            "duration_ms": duration,
        }
    return requests, year


def parse_auth(lines, skipped):
    events = []
    for pos, line in enumerate(lines):
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        ok = (isinstance(obj, dict)
              and isinstance(obj.get("ts"), (int, float)) and not isinstance(obj.get("ts"), bool)
              and obj.get("level") in ("debug", "info", "warning", "error")
              and isinstance(obj.get("request_id"), str) and HEX.match(obj["request_id"])
              and isinstance(obj.get("msg"), str))
        if not ok:
            skipped[0] += 1
            continue
        events.append((round(obj["ts"] * 1000), "auth", pos, obj["request_id"].lower(),
                       obj["level"] == "error", obj["msg"]))
    return events


def parse_orders(lines, skipped):
    events = []
    for pos, line in enumerate(lines):
        if not line or not ORDERS_DATE.match(line):
            continue
        m = ORDERS.match(line)
        if not m or not HEX.match(m.group(9)):
            skipped[0] += 1
            continue
        y, mo, d, hh, mi, ss, ms = (int(x) for x in m.groups()[:7])
        try:
            t = to_ms(datetime(y, mo, d, hh, mi, ss, ms * 1000, tzinfo=timezone.utc))
        except ValueError:
            skipped[0] += 1
            continue
        events.append((t, "orders", pos, m.group(9).lower(),
                       m.group(8) in ("ERROR", "CRITICAL"), m.group(11)))
    return events


def parse_payments(lines, year, skipped):
    events = []
    for pos, line in enumerate(lines):
        if not line:
            continue
        m = PAYMENTS.match(line)
        kv = logfmt(m.group(9)) if m else None
        if (not m or m.group(1) not in MONTHS or kv is None or kv.get("lvl") not in ("I", "W", "E")
                or not HEX.match(kv.get("rid", "")) or "msg" not in kv or year is None):
            skipped[0] += 1
            continue
        try:
            t = to_ms(datetime(year, MONTHS[m.group(1)], int(m.group(2)), int(m.group(3)),
                               int(m.group(4)), int(m.group(5)), int(m.group(6)) * 1000,
                               tzinfo=timezone.utc))
        except ValueError:
            skipped[0] += 1
            continue
        events.append((t, "payments", pos, kv["rid"].lower(), kv["lvl"] == "E", kv["msg"]))
    return events


def main(argv):
    if len(argv) != 2 or not os.path.isfile(os.path.join(argv[1], "gateway.log")):
        print("trace: usage: trace LOGDIR (LOGDIR/gateway.log must exist)", file=sys.stderr)
        return 2
    root = argv[1]
    skipped = [0]
    requests, year = parse_gateway(lines_of(os.path.join(root, "gateway.log")), skipped)
    events = parse_auth(lines_of(os.path.join(root, "auth.jsonl")), skipped)
    events += parse_orders(lines_of(os.path.join(root, "orders.log")), skipped)
    events += parse_payments(lines_of(os.path.join(root, "payments.log")), year, skipped)
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    orphans = {}
    per_request = {rid: [] for rid in requests}
    for ev in events:
        if ev[3] in per_request:
            per_request[ev[3]].append(ev)
        else:
            orphans[ev[3]] = orphans.get(ev[3], 0) + 1
    report = []
    for rid, req in requests.items():
        evs = per_request[rid]
        first = {}
        for ev in evs:
            first.setdefault(ev[1], ev[0])
        services = sorted(first, key=lambda s: (first[s], s))
        errors = [ev for ev in evs if ev[4]]
        root_cause = None
        if req["status"] >= 500 and errors:
            t, service, _pos, _rid, _err, msg = errors[0]
            root_cause = {"service": service, "time": iso(t), "message": msg}
        report.append(dict(req, services=services, events=len(evs), errors=len(errors),
                           root_cause=root_cause))
    report.sort(key=lambda r: (r["start"], r["request_id"]))
    for r in report:
        r["start"], r["end"] = iso(r["start"]), iso(r["end"])
    json.dump({"requests": report, "orphans": orphans, "skipped": skipped[0]},
              sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/trace
