import json
import os
import subprocess
from pathlib import Path

TOOL = "/app/trace"
INCIDENT = "/app/incident"
HERE = Path(__file__).parent


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def make(tmp_path, gateway=None, auth=None, orders=None, payments=None, name="logs"):
    root = tmp_path / name
    root.mkdir()
    for fname, lines in (("gateway.log", gateway), ("auth.jsonl", auth),
                         ("orders.log", orders), ("payments.log", payments)):
        if lines is None:
            continue
        text = "".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines)
        (root / fname).write_text(text, encoding="utf-8")
    return str(root)


def report(tmp_path, **files):
    out = run(make(tmp_path, **files))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def gw(rid, when="01/Jun/2024:10:00:01.520 +0200", req="POST /api/checkout HTTP/1.1", status=200, rt="0.100"):
    return f'[{when}] "{req}" {status} rt={rt} rid={rid}'


def by_id(rep):
    return {r["request_id"]: r for r in rep["requests"]}


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_incident_report_matches_expected():
    out = run(INCIDENT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads((HERE / "expected_incident.json").read_text())


def test_incident_root_causes():
    out = run(INCIDENT)
    rep = json.loads(out.stdout)
    causes = {r["request_id"]: r["root_cause"] for r in rep["requests"] if r["status"] >= 500}
    assert len(causes) == 7
    assert causes["58655852"] == {
        "service": "payments", "time": "2024-06-01T08:00:15.560Z", "message": "bank timeout after 1000ms",
    }
    assert causes["0a5d5bfe"]["service"] == "orders"
    assert rep["orphans"] == {"dead0000": 2, "dead0001": 2}
    assert rep["skipped"] == 4


def test_request_object_keys(tmp_path):
    rep = report(tmp_path, gateway=[gw("ab12")])
    assert set(rep) == {"requests", "orphans", "skipped"}
    assert set(rep["requests"][0]) == {
        "request_id", "method", "path", "status", "start", "end", "duration_ms",
        "services", "events", "errors", "root_cause",
    }


def test_gateway_time_zones_and_duration(tmp_path):
    rep = by_id(report(tmp_path, gateway=[
        gw("a1", when="01/Jun/2024:10:00:01.520 +0200", rt="1.520"),
        gw("b2", when="01/Jun/2024:01:00:00.250 +0200", rt="0.300"),
        gw("c3", when="31/May/2024:18:45:10.000 -0530", rt="12.345"),
        gw("d4", when="01/Jun/2024:00:00:00.000 +0000", rt="0.000"),
    ]))
    assert (rep["a1"]["start"], rep["a1"]["end"], rep["a1"]["duration_ms"]) == (
        "2024-06-01T08:00:00.000Z", "2024-06-01T08:00:01.520Z", 1520)
    assert (rep["b2"]["start"], rep["b2"]["end"]) == ("2024-05-31T22:59:59.950Z", "2024-05-31T23:00:00.250Z")
    assert (rep["c3"]["start"], rep["c3"]["end"], rep["c3"]["duration_ms"]) == (
        "2024-06-01T00:14:57.655Z", "2024-06-01T00:15:10.000Z", 12345)
    assert rep["d4"]["start"] == rep["d4"]["end"] == "2024-06-01T00:00:00.000Z"


def test_method_path_status_and_lowercase_id(tmp_path):
    rep = report(tmp_path, gateway=[gw("ABCDEF01", req="GET /api/cart?currency=EUR&x=1 HTTP/2.0", status=404)])
    r = rep["requests"][0]
    assert (r["request_id"], r["method"], r["path"], r["status"]) == ("abcdef01", "GET", "/api/cart?currency=EUR&x=1", 404)
    assert r["services"] == [] and r["events"] == 0 and r["errors"] == 0 and r["root_cause"] is None


def test_auth_epoch_rounding(tmp_path):
    rep = report(
        tmp_path,
        gateway=[gw("a1", status=503)],
        auth=[
            {"ts": 1717228800.123, "level": "error", "request_id": "A1", "msg": "first"},
            {"ts": 1717228799, "level": "info", "request_id": "a1", "msg": "int ts", "extra": [1, 2]},
        ],
    )
    r = rep["requests"][0]
    assert r["root_cause"] == {"service": "auth", "time": "2024-06-01T08:00:00.123Z", "message": "first"}
    assert r["events"] == 2 and r["errors"] == 1
    rep2 = report(tmp_path, name="two", gateway=[gw("a1", status=500)],
                  auth=[{"ts": 1717228800.9996, "level": "error", "request_id": "a1", "msg": "x"}])
    assert rep2["requests"][0]["root_cause"]["time"] == "2024-06-01T08:00:01.000Z"


def test_orders_levels_and_continuation_lines(tmp_path):
    rep = report(
        tmp_path,
        gateway=[gw("a1", status=500)],
        orders=[
            "2024-06-01 08:00:00,500 INFO [req=a1] orders.checkout - started",
            "2024-06-01 08:00:00,700 CRITICAL [req=a1] orders.db - write failed: disk full",
            "Traceback (most recent call last):",
            '  File "db.py", line 3, in write',
            "OSError: [Errno 28] No space left on device",
            "2024-06-01 08:00:00,800 ERROR [req=a1] orders.checkout - aborting",
            "2024-06-01 08:00:00,900 WARNING [req=a1] orders.checkout - rolled back",
        ],
    )
    r = rep["requests"][0]
    assert r["events"] == 4 and r["errors"] == 2
    assert r["root_cause"] == {"service": "orders", "time": "2024-06-01T08:00:00.700Z", "message": "write failed: disk full"}
    assert rep["skipped"] == 0


def test_payments_logfmt_year_and_case(tmp_path):
    rep = report(
        tmp_path,
        gateway=[gw("beef", when="15/Mar/2023:09:00:05.000 +0100", status=502)],
        payments=[
            'Mar 15 08:00:04.250 pay-01 payments[1]: lvl=W rid=BEEF msg="card \\"3DS\\" check \\\\ slow" amount=12',
            "Mar 15 08:00:04.750 pay-01 payments[1]: lvl=E msg=\"bank said \\\"no\\\"\" rid=BeEf",
        ],
    )
    r = rep["requests"][0]
    assert r["services"] == ["payments"] and r["events"] == 2 and r["errors"] == 1
    assert r["root_cause"] == {"service": "payments", "time": "2023-03-15T08:00:04.750Z", "message": 'bank said "no"'}
    assert rep["skipped"] == 0


def test_services_ordered_by_first_event_then_name(tmp_path):
    rep = by_id(report(
        tmp_path,
        gateway=[gw("a1"), gw("b2", when="01/Jun/2024:10:00:02.000 +0200")],
        auth=[{"ts": 1717228800.5, "level": "info", "request_id": "a1", "msg": "m"},
              {"ts": 1717228800.2, "level": "info", "request_id": "b2", "msg": "m"}],
        orders=["2024-06-01 08:00:00,100 INFO [req=a1] o - m",
                "2024-06-01 08:00:00,200 INFO [req=b2] o - m"],
        payments=["Jun  1 08:00:00.300 p p[1]: lvl=I rid=a1 msg=m",
                  "Jun  1 08:00:00.050 p p[1]: lvl=I rid=b2 msg=m"],
    ))
    assert rep["a1"]["services"] == ["orders", "payments", "auth"]
    assert rep["b2"]["services"] == ["payments", "auth", "orders"]


def test_root_cause_earliest_error_with_name_tiebreak(tmp_path):
    rep = by_id(report(
        tmp_path,
        gateway=[gw("a1", status=504), gw("b2", status=500, when="01/Jun/2024:10:00:03.000 +0200")],
        auth=[{"ts": 1717228800.4, "level": "error", "request_id": "a1", "msg": "auth late"}],
        orders=["2024-06-01 08:00:00,400 ERROR [req=a1] o - orders tie",
                "2024-06-01 08:00:00,100 INFO [req=a1] o - fine",
                "2024-06-01 08:00:01,000 ERROR [req=b2] o - first in file",
                "2024-06-01 08:00:01,000 ERROR [req=b2] o - second"],
        payments=["Jun  1 08:00:00.400 p p[1]: lvl=E rid=a1 msg=\"pay tie\"",
                  "Jun  1 08:00:00.200 p p[1]: lvl=W rid=a1 msg=warn-only"],
    ))
    assert rep["a1"]["root_cause"] == {"service": "auth", "time": "2024-06-01T08:00:00.400Z", "message": "auth late"}
    assert rep["a1"]["errors"] == 3
    assert rep["b2"]["root_cause"]["message"] == "first in file"


def test_root_cause_only_for_server_errors(tmp_path):
    rep = by_id(report(
        tmp_path,
        gateway=[gw("a1", status=401), gw("b2", status=503), gw("c3", status=499)],
        auth=[{"ts": 1717228800.0, "level": "error", "request_id": "a1", "msg": "token expired"},
              {"ts": 1717228800.0, "level": "warning", "request_id": "b2", "msg": "slow"},
              {"ts": 1717228800.0, "level": "error", "request_id": "c3", "msg": "gone"}],
    ))
    assert rep["a1"]["root_cause"] is None and rep["a1"]["errors"] == 1
    assert rep["b2"]["root_cause"] is None and rep["b2"]["errors"] == 0
    assert rep["c3"]["root_cause"] is None


def test_orphans_case_insensitive(tmp_path):
    rep = report(
        tmp_path,
        gateway=[gw("a1")],
        auth=[{"ts": 1717228800.0, "level": "info", "request_id": "FFEE", "msg": "m"}],
        orders=["2024-06-01 08:00:00,100 INFO [req=ffee] o - m", "2024-06-01 08:00:00,100 INFO [req=a1] o - m"],
        payments=["Jun  1 08:00:00.300 p p[1]: lvl=I rid=FfEe msg=m", "Jun  1 08:00:00.300 p p[1]: lvl=I rid=0c msg=m"],
    )
    assert rep["orphans"] == {"ffee": 3, "0c": 1}
    assert rep["requests"][0]["events"] == 1


def test_skipped_lines_counted(tmp_path):
    rep = report(
        tmp_path,
        gateway=[gw("a1"), gw("-"), gw("zz99"), "[01/Jun/2024:10:00:01 +0200] \"GET / HTTP/1.1\" 200 rt=0.1 rid=ab", "", "junk"],
        auth=[{"ts": "1717228800", "level": "info", "request_id": "a1", "msg": "m"},
              {"ts": 1717228800, "level": "fatal", "request_id": "a1", "msg": "m"},
              {"ts": 1717228800, "level": "info", "msg": "no id"},
              '{"ts": 1717228800, "level": "info", "request_id": "a1", "msg": "ok"}',
              "{not json", "[1, 2]"],
        orders=["2024-06-01 08:00:00,100 INFO [req=-] o.main - booted",
                "2024-06-01 08:00:00 INFO [req=a1] o - no millis",
                "2024-06-01 08:00:00,100 NOTICE [req=a1] o - bad level",
                "  indented continuation before any event",
                "2024-06-01 08:00:00,100 INFO [req=a1] o - good"],
        payments=["Jun  1 08:00:00.300 p p[1]: lvl=X rid=a1 msg=m",
                  "Jun  1 08:00:00.300 p p[1]: lvl=I rid=a1",
                  "Jun  1 08:00:00 p p[1]: lvl=I rid=a1 msg=m",
                  "Jun  1 08:00:00.300 p p[1]: lvl=I rid=a1 msg=m"],
    )
    assert rep["skipped"] == 4 + 5 + 3 + 3
    assert rep["requests"][0]["events"] == 3
    assert [r["request_id"] for r in rep["requests"]] == ["a1"]


def test_missing_backend_logs_are_empty(tmp_path):
    rep = report(tmp_path, gateway=[gw("a1", status=500)])
    r = rep["requests"][0]
    assert r["events"] == 0 and r["root_cause"] is None
    assert rep["orphans"] == {} and rep["skipped"] == 0


def test_requests_ordered_by_start_then_id(tmp_path):
    rep = report(tmp_path, gateway=[
        gw("cc", when="01/Jun/2024:10:00:05.000 +0200", rt="1.000"),
        gw("bb", when="01/Jun/2024:10:00:04.500 +0200", rt="0.500"),
        gw("aa", when="01/Jun/2024:10:00:02.000 +0200", rt="0.001"),
        gw("dd", when="01/Jun/2024:08:00:03.000 +0000", rt="0.000"),
    ])
    assert [r["request_id"] for r in rep["requests"]] == ["aa", "dd", "bb", "cc"]


def test_missing_gateway_or_dir_exits_2(tmp_path):
    root = make(tmp_path, auth=[{"ts": 1, "level": "info", "request_id": "a", "msg": "m"}])
    for args in ([root], [str(tmp_path / "nope")], []):
        out = run(*args)
        assert out.returncode == 2, args
        assert out.stdout == ""
        assert out.stderr.strip() != ""


def test_logs_not_modified():
    before = {p.name: p.read_bytes() for p in Path(INCIDENT).iterdir()}
    run(INCIDENT)
    assert {p.name: p.read_bytes() for p in Path(INCIDENT).iterdir()} == before


def test_large_volume(tmp_path):
    gateway, orders, auth = [], [], []
    for i in range(4000):
        rid = f"{i:06x}"
        sec = 100 + i
        hms = f"{sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
        local = f"{10 + sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
        gateway.append(gw(rid, when=f"01/Jun/2024:{local}.500 +0200",
                          status=500 if i % 10 == 0 else 200, rt="0.400"))
        level = "ERROR" if i % 20 == 0 else "INFO"
        orders.append(f"2024-06-01 {8 + sec // 3600:02d}:{hms[3:]},200 {level} [req={rid}] o - step {i}")
        auth.append({"ts": 1717228800 + sec, "level": "info", "request_id": rid, "msg": "ok"})
    rep = report(tmp_path, gateway=gateway, orders=orders, auth=auth)
    assert len(rep["requests"]) == 4000
    with_cause = [r for r in rep["requests"] if r["root_cause"]]
    assert len(with_cause) == 200
    assert all(r["services"] == ["auth", "orders"] for r in rep["requests"])
    assert rep["requests"][0]["start"] == "2024-06-01T08:01:40.100Z"
