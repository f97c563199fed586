import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/latency"
LOGS = Path("/app/logs")
HERE = Path(__file__).parent
HEADER = "endpoint\tcount\tp50\tp90\tp99\tmax"


def run(*args, stdin=None):
    return subprocess.run([TOOL, *args], input=stdin, capture_output=True, text=True, timeout=60)


def req(method="GET", path="/x", dur="duration_ms=1", extra=""):
    return f"2024-05-01T00:00:00Z INFO method={method} path={path} status=200 {dur} {extra}".rstrip()


def table(tmp_path, lines, *opts):
    path = tmp_path / "app.log"
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    out = run(*opts, str(path))
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()
    assert rows[0] == HEADER
    return [r.split("\t") for r in rows[1:]]


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_logs_exact():
    out = run(str(LOGS / "api-1.log"), str(LOGS / "api-2.log"))
    assert out.returncode == 0, out.stderr
    assert out.stdout == (HERE / "expected_sample.tsv").read_text()


def test_sample_min_count_filters_rows():
    out = run("--min-count", "140", str(LOGS / "api-1.log"), str(LOGS / "api-2.log"))
    assert out.returncode == 0
    names = [r.split("\t")[0] for r in out.stdout.splitlines()[1:]]
    assert names == ["GET /api/orders/{id}/items", "GET /health"]


def test_nearest_rank_percentiles(tmp_path):
    lines = [req(dur=f"duration_ms={v}") for v in range(100, 0, -1)]
    assert table(tmp_path, lines) == [["GET /x", "100", "50.0", "90.0", "99.0", "100.0"]]


def test_nearest_rank_small_samples(tmp_path):
    assert table(tmp_path, [req(dur="duration_ms=7.3")]) == [["GET /x", "1", "7.3", "7.3", "7.3", "7.3"]]
    lines = [req(dur=f"duration_ms={v}") for v in (30, 10, 20)]
    assert table(tmp_path, lines) == [["GET /x", "3", "20.0", "30.0", "30.0", "30.0"]]
    lines = [req(dur=f"duration_ms={v}") for v in range(1, 11)]
    assert table(tmp_path, lines) == [["GET /x", "10", "5.0", "9.0", "10.0", "10.0"]]


def test_path_normalisation(tmp_path):
    lines = [
        req(path="/api/users/42"),
        req(path="/api/users/7/"),
        req(path="/api/users/42?expand=true&x=1"),
        req(path="/api/keys/3f2504e0-4f89-11d3-9a0c-0305e82c3301"),
        req(path="/api/keys/3F2504E0-4F89-11D3-9A0C-0305E82C3301/"),
        req(path="/"),
        req(path="/?page=2"),
    ]
    names = sorted(r[0] + " " + r[1] for r in table(tmp_path, lines))
    assert names == ["GET / 2", "GET /api/keys/{uuid} 2", "GET /api/users/{id} 3"]


def test_only_whole_segments_are_replaced(tmp_path):
    lines = [
        req(path="/v2/items/42abc"),
        req(path="/v2/items/0042"),
        req(path="/v2/items/3f2504e0-4f89-11d3-9a0c-0305e82c330"),
        req(path="/files/12.5"),
    ]
    names = sorted(r[0] for r in table(tmp_path, lines))
    assert names == [
        "GET /files/12.5",
        "GET /v2/items/3f2504e0-4f89-11d3-9a0c-0305e82c330",
        "GET /v2/items/42abc",
        "GET /v2/items/{id}",
    ]


def test_duration_units(tmp_path):
    lines = [
        req(path="/us", dur="duration=870us"),
        req(path="/mu", dur="duration=2300µs"),
        req(path="/ms", dur="duration=12.5ms"),
        req(path="/s", dur="duration=1.5s"),
        req(path="/bare", dur="duration_ms=3"),
    ]
    rows = {r[0]: r[2] for r in table(tmp_path, lines)}
    assert rows == {"GET /us": "0.9", "GET /mu": "2.3", "GET /ms": "12.5", "GET /s": "1500.0", "GET /bare": "3.0"}


def test_duration_ms_wins_over_duration(tmp_path):
    lines = [req(dur="duration=9s duration_ms=4"), req(dur="duration_ms=6 duration=1ms")]
    assert table(tmp_path, lines) == [["GET /x", "2", "4.0", "6.0", "6.0", "6.0"]]


def test_quoted_values_and_escapes(tmp_path):
    lines = [
        req(path='"/search/a b"', extra='msg="he said \\"hi\\" \\\\o/"'),
        req(method='"PUT"', path='"/docs/9"'),
    ]
    names = sorted(r[0] for r in table(tmp_path, lines))
    assert names == ["GET /search/a b", "PUT /docs/{id}"]


def test_pairs_inside_quoted_values_are_ignored(tmp_path):
    lines = [
        req(path="/real", dur="duration_ms=5", extra='msg="retry path=/fake duration_ms=99999 method=POST"'),
        '2024-05-01T00:00:00Z INFO msg="method=GET path=/ghost duration_ms=1"',
    ]
    assert table(tmp_path, lines) == [["GET /real", "1", "5.0", "5.0", "5.0", "5.0"]]


def test_non_request_lines_ignored(tmp_path):
    lines = [
        req(dur="duration_ms=2"),
        req(dur="duration=fast"),
        req(dur="duration=15"),
        req(dur="duration_ms=12ms"),
        req(dur="duration_ms=-4"),
        "2024-05-01T00:00:00Z INFO path=/x duration_ms=3",
        "2024-05-01T00:00:00Z INFO method=GET duration_ms=3",
        "2024-05-01T00:00:00Z WARN msg=\"disk 91% full\"",
        "",
        "garbage",
    ]
    assert table(tmp_path, lines) == [["GET /x", "1", "2.0", "2.0", "2.0", "2.0"]]


def test_rows_sorted_by_p99_then_endpoint(tmp_path):
    lines = [
        req(path="/b", dur="duration_ms=10"),
        req(path="/a", dur="duration_ms=10"),
        req(method="POST", path="/a", dur="duration_ms=10"),
        req(path="/slow", dur="duration_ms=300"),
        req(path="/fast", dur="duration_ms=0.04"),
    ]
    names = [r[0] for r in table(tmp_path, lines)]
    assert names == ["GET /slow", "GET /a", "GET /b", "POST /a", "GET /fast"]
    assert table(tmp_path, lines)[-1][2:] == ["0.0", "0.0", "0.0", "0.0"]


def test_min_count_option(tmp_path):
    lines = [req(path="/many")] * 3 + [req(path="/few")] * 2
    assert [r[0] for r in table(tmp_path, lines, "--min-count", "3")] == ["GET /many"]
    assert table(tmp_path, lines, "--min-count", "4") == []


def test_multiple_files_and_stdin(tmp_path):
    a = tmp_path / "a.log"
    a.write_text(req(dur="duration_ms=1") + "\n")
    out = run(str(a), "-", stdin=req(dur="duration_ms=3") + "\n" + req(dur="duration_ms=2") + "\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout == HEADER + "\nGET /x\t3\t2.0\t3.0\t3.0\t3.0\n"


def test_empty_input_prints_header_only(tmp_path):
    assert table(tmp_path, []) == []


def test_missing_file_exits_2(tmp_path):
    out = run(str(tmp_path / "missing.log"))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() != ""


@pytest.mark.parametrize("bad", ["0", "-2", "many", "1.5"])
def test_bad_min_count_exits_2(tmp_path, bad):
    path = tmp_path / "a.log"
    path.write_text(req() + "\n")
    out = run("--min-count", bad, str(path))
    assert out.returncode == 2
    assert out.stdout == ""


def test_large_input(tmp_path):
    lines = []
    for i in range(60000):
        lines.append(req(path=f"/item/{i}", dur=f"duration_ms={i % 1000}"))
        if i % 3 == 0:
            lines.append(req(method="POST", path="/item", dur=f"duration={i % 200}ms"))
    rows = table(tmp_path, lines)
    assert rows == [
        ["GET /item/{id}", "60000", "499.0", "899.0", "989.0", "999.0"],
        ["POST /item", "20000", "99.0", "179.0", "197.0", "199.0"],
    ]
