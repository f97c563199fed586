import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/logstats"
LOGS = Path("/app/logs")


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def stats(*args):
    out = run(*args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def line(ip="10.0.0.1", request="GET / HTTP/1.1", status=200, size="100", ref="-", ua="curl/8"):
    return f'{ip} - - [01/Jan/2024:00:00:00 +0000] "{request}" {status} {size} "{ref}" "{ua}"'


def log(tmp_path, lines, name="access.log"):
    path = tmp_path / name
    path.write_text("".join(x + "\n" for x in lines))
    return str(path)


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_logs_summary():
    report = stats(str(LOGS / "access.log"), str(LOGS / "access.log.1.gz"))
    assert report["requests"] == 302
    assert report["malformed"] == 3
    assert report["unique_ips"] == 7
    assert report["bytes"] == 5072286
    assert report["status"] == {"1xx": 0, "2xx": 181, "3xx": 51, "4xx": 41, "5xx": 29}
    assert report["top_paths"] == [
        {"path": "/api/orders", "count": 88},
        {"path": "/favicon.ico", "count": 33},
        {"path": "/index.html", "count": 33},
        {"path": "/login", "count": 31},
        {"path": "/", "count": 30},
    ]
    assert report["top_ips"][0] == {"ip": "2001:db8::17", "count": 52}
    assert report["top_ips"][3:] == [
        {"ip": "172.16.0.3", "count": 42},
        {"ip": "192.0.2.77", "count": 42},
    ]
    assert report["error_rate"] == pytest.approx(0.2318, abs=1e-9)


def test_output_has_exactly_the_documented_keys(tmp_path):
    report = stats(log(tmp_path, [line()]))
    assert set(report) == {
        "requests", "malformed", "unique_ips", "bytes", "status",
        "top_paths", "top_ips", "error_rate",
    }


def test_malformed_lines_counted_and_blank_lines_ignored(tmp_path):
    lines = [
        line(),
        "",
        "totally not a log line",
        line(status="20"),
        line(size="12kb"),
        line() + " trailing",
        '10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] "GET / HTTP/1.1" 200 5',
        line(ip="10.0.0.2"),
    ]
    report = stats(log(tmp_path, lines))
    assert report["requests"] == 2
    assert report["malformed"] == 5


def test_status_classes_always_present(tmp_path):
    lines = [line(status=s) for s in (101, 204, 200, 302, 418, 500, 502, 599)]
    report = stats(log(tmp_path, lines))
    assert report["status"] == {"1xx": 1, "2xx": 2, "3xx": 1, "4xx": 1, "5xx": 3}


def test_bytes_with_dash_sizes(tmp_path):
    report = stats(log(tmp_path, [line(size="-"), line(size="0"), line(size="1500"), line(size="25")]))
    assert report["bytes"] == 1525


def test_query_strings_removed_from_paths(tmp_path):
    lines = [
        line(request="GET /search?q=a HTTP/1.1"),
        line(request="GET /search?q=b&x=?y HTTP/1.1"),
        line(request="GET /search HTTP/2.0"),
        line(request="POST /other? HTTP/1.1"),
    ]
    report = stats(log(tmp_path, lines))
    assert report["top_paths"] == [{"path": "/search", "count": 3}, {"path": "/other", "count": 1}]


def test_ties_broken_by_ascending_string_order(tmp_path):
    lines = [line(ip="10.0.0.9", request=f"GET {p} HTTP/1.1") for p in ["/b", "/a", "/c", "/B", "/a", "/b"]]
    lines += [line(ip="10.0.0.10"), line(ip="10.0.0.10")]
    report = stats(log(tmp_path, lines))
    assert report["top_paths"] == [
        {"path": "/", "count": 2},
        {"path": "/a", "count": 2},
        {"path": "/b", "count": 2},
        {"path": "/B", "count": 1},
        {"path": "/c", "count": 1},
    ]
    assert report["top_ips"] == [{"ip": "10.0.0.9", "count": 6}, {"ip": "10.0.0.10", "count": 2}]


def test_top_option_limits_lists(tmp_path):
    lines = [line(ip=f"10.0.0.{i}", request=f"GET /p{i} HTTP/1.1") for i in range(1, 9) for _ in range(i)]
    path = log(tmp_path, lines)
    report = stats("--top", "2", path)
    assert report["top_paths"] == [{"path": "/p8", "count": 8}, {"path": "/p7", "count": 7}]
    assert report["top_ips"] == [{"ip": "10.0.0.8", "count": 8}, {"ip": "10.0.0.7", "count": 7}]
    assert len(stats(path)["top_paths"]) == 5
    assert len(stats("--top", "50", path)["top_ips"]) == 8


def test_requests_without_three_part_request_have_no_path(tmp_path):
    lines = [
        line(request="-", status=400, size="0"),
        line(request="\\x16\\x03\\x01", status=400),
        line(request="GET /only-two-parts", status=400),
        line(request="GET /ok HTTP/1.1"),
    ]
    report = stats(log(tmp_path, lines))
    assert report["requests"] == 4
    assert report["malformed"] == 0
    assert report["status"]["4xx"] == 3
    assert report["top_paths"] == [{"path": "/ok", "count": 1}]


def test_quoted_fields_may_be_empty_or_contain_spaces(tmp_path):
    lines = [line(ref="", ua=""), line(ref="https://x.example/a b", ua="Mozilla/5.0 (X11; Linux) Gecko")]
    report = stats(log(tmp_path, lines))
    assert report["requests"] == 2 and report["malformed"] == 0


def test_unique_ips(tmp_path):
    lines = [line(ip=ip) for ip in ["10.0.0.1", "10.0.0.1", "::1", "fe80::1", "10.0.0.10"]]
    assert stats(log(tmp_path, lines))["unique_ips"] == 4


def test_gzip_and_multiple_files_aggregate(tmp_path):
    plain = log(tmp_path, [line(ip="10.9.9.9", request="GET /x HTTP/1.1")] * 3)
    gz = tmp_path / "old.log.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(line(ip="10.9.9.9", request="GET /y HTTP/1.1", status=503) + "\n")
        fh.write("garbage\n")
    report = stats(plain, str(gz))
    assert report["requests"] == 4
    assert report["malformed"] == 1
    assert report["top_paths"] == [{"path": "/x", "count": 3}, {"path": "/y", "count": 1}]
    assert report["top_ips"] == [{"ip": "10.9.9.9", "count": 4}]
    assert report["error_rate"] == pytest.approx(0.25, abs=1e-9)


def test_empty_log(tmp_path):
    report = stats(log(tmp_path, []))
    assert report["requests"] == 0 and report["malformed"] == 0
    assert report["unique_ips"] == 0 and report["bytes"] == 0
    assert report["top_paths"] == [] and report["top_ips"] == []
    assert report["error_rate"] == 0
    assert report["status"] == {"1xx": 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0}


def test_error_rate_rounded_to_four_places(tmp_path):
    lines = [line(status=404)] + [line(status=200)] * 2
    assert stats(log(tmp_path, lines))["error_rate"] == pytest.approx(0.3333, abs=1e-9)
    lines = [line(status=500)] * 2 + [line(status=200)] * 1
    assert stats(log(tmp_path, lines))["error_rate"] == pytest.approx(0.6667, abs=1e-9)


def test_missing_file_exits_2(tmp_path):
    out = run(log(tmp_path, [line()]), str(tmp_path / "nope.log"))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() != ""


@pytest.mark.parametrize("bad", ["0", "-1", "three", "1.5"])
def test_bad_top_exits_2(tmp_path, bad):
    out = run("--top", bad, log(tmp_path, [line()]))
    assert out.returncode == 2
    assert out.stdout == ""


def test_large_log(tmp_path):
    lines = [
        line(
            ip=f"10.0.{i % 50}.{i % 7}",
            request=f"GET /item/{i % 300} HTTP/1.1",
            status=[200, 301, 404, 500, 200][i % 5],
            size=str(i % 1000),
        )
        for i in range(60000)
    ]
    report = stats(log(tmp_path, lines))
    assert report["requests"] == 60000
    assert report["bytes"] == sum(i % 1000 for i in range(60000))
    assert report["top_paths"][0] == {"path": "/item/0", "count": 200}
    assert report["unique_ips"] == 350
    assert report["status"] == {"1xx": 0, "2xx": 24000, "3xx": 12000, "4xx": 12000, "5xx": 12000}
    assert report["error_rate"] == pytest.approx(0.4, abs=1e-9)
