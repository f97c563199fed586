import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/stock-report"
HERE = Path(__file__).parent
CATALOG = [
    {"sku": "A", "name": "Alpha", "unit_cost": "0.99"},
    {"sku": "B", "name": "Beta", "unit_cost": "12"},
    {"sku": "C", "name": "Gamma", "unit_cost": "149.5"},
]


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def setup(tmp_path, feeds, catalog=CATALOG):
    cat = tmp_path / "catalog.json"
    cat.write_text(json.dumps(catalog))
    d = tmp_path / "feeds"
    d.mkdir(exist_ok=True)
    for name, events in feeds.items():
        lines = "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in events)
        if name.endswith(".gz"):
            with gzip.open(d / name, "wt") as fh:
                fh.write(lines)
        else:
            (d / name).write_text(lines)
    return str(cat), str(d)


def report(tmp_path, feeds, catalog=CATALOG):
    out = run(*setup(tmp_path, feeds, catalog))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def ev(eid, ts, kind, **fields):
    return {"id": eid, "ts": ts, "type": kind, **fields}


def rcv(eid, ts, sku, wh, qty):
    return ev(eid, ts, "receive", sku=sku, warehouse=wh, qty=qty)


def shp(eid, ts, sku, wh, qty):
    return ev(eid, ts, "ship", sku=sku, warehouse=wh, qty=qty)


T = "2024-04-02T10:00:00Z"


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_feeds_exact():
    out = run("/app/catalog.json", "/app/feeds")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads((HERE / "expected_report.json").read_text())


def test_sample_bookkeeping_counts():
    rep = json.loads(run("/app/catalog.json", "/app/feeds").stdout)
    assert rep["duplicates"] == 12
    assert rep["conflicts"] == ["leg-0011", "leg-0056"]
    assert rep["malformed"] == 4
    assert rep["stock"]["A-100"].get("AMS", 0) < 1000  # the .bak file is not a feed


def test_basic_movements_and_transfer(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        rcv("e1", "2024-04-02T10:00:00Z", "A", "AMS", 10),
        shp("e2", "2024-04-02T10:00:01Z", "A", "AMS", 3),
        ev("e3", "2024-04-02T10:00:02Z", "transfer", sku="A", **{"from": "AMS", "to": "BER"}, qty=7),
        rcv("e4", "2024-04-02T10:00:03Z", "B", "BER", 2),
    ]})
    assert rep["stock"] == {"A": {"BER": 7}, "B": {"BER": 2}}
    assert rep["rejected"] == [] and rep["variances"] == []


def test_order_by_utc_instant_across_offsets(tmp_path):
    rep = report(tmp_path, {
        "x.ndjson": [shp("s1", "2024-04-02T12:30:00+02:00", "A", "AMS", 4)],
        "y.ndjson": [rcv("r1", "2024-04-02T10:15:00Z", "A", "AMS", 5)],
    })
    assert rep["stock"] == {"A": {"AMS": 1}}
    rep = report(tmp_path, {
        "x.ndjson": [shp("s1", "2024-04-02T12:00:00+02:00", "A", "AMS", 4)],
        "y.ndjson": [rcv("r1", "2024-04-02T05:15:00-05:00", "A", "AMS", 5)],
    })
    assert rep["rejected"] == [{"id": "s1", "reason": "insufficient_stock"}]
    assert rep["stock"] == {"A": {"AMS": 5}}


def test_ties_broken_by_id_and_fractions(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        shp("b-ship", T, "A", "AMS", 1),
        rcv("a-rcv", T, "A", "AMS", 1),
        shp("z1", "2024-04-02T10:00:05.25Z", "B", "AMS", 1),
        rcv("z2", "2024-04-02T10:00:05.5Z", "B", "AMS", 1),
        shp("z3", "2024-04-02T10:00:05.75Z", "B", "AMS", 1),
    ]})
    assert rep["stock"] == {}
    assert rep["rejected"] == [{"id": "z1", "reason": "insufficient_stock"}]


def test_insufficient_stock_changes_nothing(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        rcv("e1", "2024-04-02T10:00:00Z", "A", "AMS", 3),
        shp("e2", "2024-04-02T10:00:01Z", "A", "AMS", 4),
        ev("e3", "2024-04-02T10:00:02Z", "transfer", sku="A", **{"from": "AMS", "to": "MAD"}, qty=5),
        shp("e4", "2024-04-02T10:00:03Z", "A", "AMS", 3),
    ]})
    assert rep["stock"] == {}
    assert rep["rejected"] == [
        {"id": "e2", "reason": "insufficient_stock"},
        {"id": "e3", "reason": "insufficient_stock"},
    ]


def test_invalid_quantities(tmp_path):
    bad = [0, -1, 5.0, True, "5", None]
    events = [rcv(f"q{i}", T, "A", "AMS", q) for i, q in enumerate(bad)]
    events += [ev("c1", T, "adjust", sku="A", warehouse="AMS", counted=-1),
               ev("c2", T, "adjust", sku="A", warehouse="AMS", counted=2.0)]
    rep = report(tmp_path, {"f.ndjson": events})
    assert sorted(r["id"] for r in rep["rejected"]) == ["c1", "c2", "q0", "q1", "q2", "q3", "q4", "q5"]
    assert {r["reason"] for r in rep["rejected"]} == {"invalid_quantity"}


def test_rejection_reason_precedence(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        rcv("a", "2024-04-02T10:00:00Z", "NOPE", "AMS", 0),
        ev("b", "2024-04-02T10:00:01Z", "transfer", sku="A", **{"from": "AMS", "to": "AMS"}, qty=0),
        ev("c", "2024-04-02T10:00:02Z", "transfer", sku="A", **{"from": "AMS", "to": "AMS"}, qty=99),
    ]})
    assert rep["rejected"] == [
        {"id": "a", "reason": "unknown_sku"},
        {"id": "b", "reason": "invalid_quantity"},
        {"id": "c", "reason": "invalid_transfer"},
    ]


def test_adjust_and_variances(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        rcv("r", "2024-04-02T10:00:00Z", "C", "MAD", 5),
        ev("adj1", "2024-04-02T10:00:01Z", "adjust", sku="C", warehouse="MAD", counted=5),
        ev("adj2", "2024-04-02T10:00:02Z", "adjust", sku="C", warehouse="MAD", counted=3),
        ev("adj3", "2024-04-02T10:00:03Z", "adjust", sku="B", warehouse="AMS", counted=2),
        ev("adj4", "2024-04-02T10:00:04Z", "adjust", sku="B", warehouse="AMS", counted=0),
    ]})
    assert rep["variances"] == [
        {"id": "adj2", "sku": "C", "warehouse": "MAD", "expected": 5, "counted": 3},
        {"id": "adj3", "sku": "B", "warehouse": "AMS", "expected": 0, "counted": 2},
        {"id": "adj4", "sku": "B", "warehouse": "AMS", "expected": 2, "counted": 0},
    ]
    assert rep["stock"] == {"C": {"MAD": 3}}


def test_duplicates_and_conflicts(tmp_path):
    e1 = rcv("e1", T, "A", "AMS", 4)
    e2 = rcv("e2", T, "B", "AMS", 1)
    e2_changed = rcv("e2", T, "B", "AMS", 2)
    rep = report(tmp_path, {
        "one.ndjson": [e1, e1, e2],
        "two.ndjson.gz": [e1, e2_changed, e2],
    })
    assert rep["duplicates"] == 2
    assert rep["conflicts"] == ["e2"]
    assert rep["stock"] == {"A": {"AMS": 4}}


def test_voids(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        ev("v1", "2024-04-02T09:00:00Z", "void", target="r2"),
        rcv("r1", "2024-04-02T10:00:00Z", "A", "AMS", 5),
        rcv("r2", "2024-04-02T11:00:00Z", "A", "AMS", 50),
        ev("v2", "2024-04-02T12:00:00Z", "void", target="missing"),
        ev("v3", "2024-04-02T12:00:01Z", "void", target="v1"),
        shp("s1", "2024-04-02T13:00:00Z", "NOPE", "AMS", 1),
        ev("v4", "2024-04-02T14:00:00Z", "void", target="s1"),
    ]})
    assert rep["stock"] == {"A": {"AMS": 5}}
    assert rep["rejected"] == [
        {"id": "v2", "reason": "unknown_target"},
        {"id": "v3", "reason": "unknown_target"},
    ]


def test_void_of_conflicted_event_is_rejected(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        rcv("r", T, "A", "AMS", 1),
        rcv("r", T, "A", "AMS", 2),
        ev("v", T, "void", target="r"),
    ]})
    assert rep["conflicts"] == ["r"]
    assert rep["rejected"] == [{"id": "v", "reason": "unknown_target"}]


def test_malformed_lines(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        "{not json",
        "[1, 2, 3]",
        json.dumps({"id": 7, "ts": T, "type": "receive", "sku": "A", "warehouse": "AMS", "qty": 1}),
        json.dumps(rcv("no-zone", "2024-04-02T10:00:00", "A", "AMS", 1)),
        json.dumps(rcv("bad-date", "2024-02-30T10:00:00Z", "A", "AMS", 1)),
        json.dumps(ev("odd", T, "restock", sku="A", warehouse="AMS", qty=1)),
        json.dumps(ev("noqty", T, "receive", sku="A", warehouse="AMS")),
        json.dumps(ev("numwh", T, "receive", sku="A", warehouse=5, qty=1)),
        json.dumps(ev("notarget", T, "void")),
        "",
        json.dumps(rcv("good", T, "A", "AMS", 1)),
    ]})
    assert rep["malformed"] == 9
    assert rep["stock"] == {"A": {"AMS": 1}}


def test_feed_file_selection(tmp_path):
    rep = report(tmp_path, {
        "a.ndjson": [rcv("p", T, "A", "AMS", 1)],
        "b.ndjson.gz": [rcv("g", T, "A", "AMS", 10)],
        "c.json": [rcv("x1", T, "A", "AMS", 100)],
        "d.ndjson.bak": [rcv("x2", T, "A", "AMS", 1000)],
    })
    sub = tmp_path / "feeds" / "nested"
    sub.mkdir()
    (sub / "e.ndjson").write_text(json.dumps(rcv("x3", T, "A", "AMS", 10000)) + "\n")
    out = run(str(tmp_path / "catalog.json"), str(tmp_path / "feeds"))
    assert rep["stock"] == {"A": {"AMS": 11}}
    assert json.loads(out.stdout)["stock"] == {"A": {"AMS": 11}}


def test_value_exact_cents(tmp_path):
    rep = report(tmp_path, {"f.ndjson": [
        rcv("a", T, "A", "AMS", 3),
        rcv("b", T, "B", "AMS", 1),
        rcv("c", T, "C", "BER", 3),
        rcv("d", T, "A", "MAD", 1),
        shp("e", "2024-04-02T11:00:00Z", "A", "MAD", 1),
    ]})
    assert rep["value"] == {"AMS": "14.97", "BER": "448.50"}
    assert rep["stock"] == {"A": {"AMS": 3}, "B": {"AMS": 1}, "C": {"BER": 3}}


def test_empty_feeds(tmp_path):
    rep = report(tmp_path, {})
    assert rep == {"stock": {}, "value": {}, "variances": [], "rejected": [], "duplicates": 0,
                   "conflicts": [], "malformed": 0}


@pytest.mark.parametrize("case", ["missing-catalog", "bad-catalog", "catalog-not-array", "missing-dir"])
def test_usage_errors_exit_2(tmp_path, case):
    cat, d = setup(tmp_path, {"f.ndjson": [rcv("a", T, "A", "AMS", 1)]})
    if case == "missing-catalog":
        cat = str(tmp_path / "nope.json")
    elif case == "bad-catalog":
        Path(cat).write_text("{oops")
    elif case == "catalog-not-array":
        Path(cat).write_text('{"sku": "A"}')
    else:
        d = str(tmp_path / "nodir")
    out = run(cat, d)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() != ""


def test_large_replay(tmp_path):
    events = []
    for i in range(30000):
        ts = f"2024-04-02T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        make = rcv if i < 20000 else shp
        events.append(make(f"e{i:05d}", ts, "A", f"W{i % 4}", 1))
    events.append(shp("late", "2024-04-03T00:00:00Z", "A", "W0", 2501))
    rep = report(tmp_path, {"big.ndjson": events[::-1]})
    assert rep["rejected"] == [{"id": "late", "reason": "insufficient_stock"}]
    assert rep["stock"] == {"A": {"W0": 2500, "W1": 2500, "W2": 2500, "W3": 2500}}
    assert rep["value"] == {"W0": "2475.00", "W1": "2475.00", "W2": "2475.00", "W3": "2475.00"}
