import json
import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/jflat"
SAMPLE = "/app/data/service.json"


def run(*args, stdin=None):
    return subprocess.run([TOOL, *args], input=stdin, capture_output=True, text=True, timeout=60)


def jflat(mode, doc, tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    out = run(mode, str(path))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_flatten_exact():
    out = run("flatten", SAMPLE)
    assert out.returncode == 0, out.stderr
    flat = json.loads(out.stdout)
    expected = {
        "service": "checkout",
        "version": 3,
        "replicas.0.zone": "eu-west-1a",
        "replicas.0.healthy": True,
        "replicas.0.latency_ms": 12.5,
        "replicas.1.zone": "eu-west-1b",
        "replicas.1.healthy": False,
        "replicas.1.latency_ms": None,
        "limits.cpu": "500m",
        "limits.memory\\.max": "1Gi",
        "limits.tags": [],
        "owners": {},
        "path\\\\with\\\\backslashes.x": 1,
    }
    assert flat == expected
    assert list(flat) == list(expected)


def test_sample_roundtrip(tmp_path):
    original = json.loads(Path(SAMPLE).read_text())
    flat = json.loads(run("flatten", SAMPLE).stdout)
    assert jflat("unflatten", flat, tmp_path) == original


def test_key_escaping(tmp_path):
    doc = {"a.b": {"c\\d": 1, "e\\.f": 2, "": 3}}
    flat = jflat("flatten", doc, tmp_path)
    assert flat == {"a\\.b.c\\\\d": 1, "a\\.b.e\\\\\\.f": 2, "a\\.b.": 3}
    assert jflat("unflatten", flat, tmp_path) == doc


def test_nested_arrays(tmp_path):
    flat = jflat("flatten", {"m": [[1, 2], [3], ["x", {"y": None}]]}, tmp_path)
    assert flat == {"m.0.0": 1, "m.0.1": 2, "m.1.0": 3, "m.2.0": "x", "m.2.1.y": None}
    assert list(flat) == ["m.0.0", "m.0.1", "m.1.0", "m.2.0", "m.2.1.y"]


def test_empty_containers_are_leaves(tmp_path):
    doc = {"a": {}, "b": [], "c": [{}, []], "d": {"e": {}}}
    flat = jflat("flatten", doc, tmp_path)
    assert flat == {"a": {}, "b": [], "c.0": {}, "c.1": [], "d.e": {}}
    assert jflat("unflatten", flat, tmp_path) == doc
    assert jflat("flatten", {}, tmp_path) == {}
    assert jflat("flatten", [], tmp_path) == {}


def test_top_level_array(tmp_path):
    flat = jflat("flatten", [{"id": 1}, {"id": 2, "tags": ["a"]}], tmp_path)
    assert flat == {"0.id": 1, "1.id": 2, "1.tags.0": "a"}
    assert jflat("unflatten", flat, tmp_path) == [{"id": 1}, {"id": 2, "tags": ["a"]}]


def test_scalar_values_preserved(tmp_path):
    doc = {"i": 2, "f": 1.5, "neg": -7, "big": 12345678901234567890, "s": "", "t": True, "n": None}
    flat = jflat("flatten", doc, tmp_path)
    assert flat == doc
    assert type(flat["i"]) is int and type(flat["f"]) is float


def test_unicode_keys_and_values(tmp_path):
    doc = {"città": {"名前": "東京", "emoji": "☃"}}
    flat = jflat("flatten", doc, tmp_path)
    assert flat == {"città.名前": "東京", "città.emoji": "☃"}


def test_reads_stdin():
    doc = json.dumps({"a": {"b": 1}})
    for args in (["flatten"], ["flatten", "-"]):
        out = run(*args, stdin=doc)
        assert out.returncode == 0
        assert json.loads(out.stdout) == {"a.b": 1}
    out = run("unflatten", stdin='{"x.y": [1]}')
    assert json.loads(out.stdout) == {"x": {"y": [1]}}


def test_unflatten_array_detection(tmp_path):
    flat = {"a.1": "second", "a.0": "first", "b.0": 1, "b.2": 3, "c.01": 1, "c.1": 2, "d.0": "only"}
    assert jflat("unflatten", flat, tmp_path) == {
        "a": ["first", "second"],
        "b": {"0": 1, "2": 3},
        "c": {"01": 1, "1": 2},
        "d": ["only"],
    }


def test_unflatten_key_order_first_seen(tmp_path):
    out = jflat("unflatten", {"z.b": 1, "a": 2, "z.a": 3}, tmp_path)
    assert list(out) == ["z", "a"]
    assert list(out["z"]) == ["b", "a"]


def test_unflatten_top_level_array(tmp_path):
    assert jflat("unflatten", {"1": "b", "0": "a"}, tmp_path) == ["a", "b"]


@pytest.mark.parametrize(
    "flat",
    [{"a": 1, "a.b": 2}, {"a.b.c": 1, "a.b": 2}, {"x.0": 1, "x.0.y": 2}],
    ids=["leaf-then-child", "child-then-leaf", "array-element-conflict"],
)
def test_unflatten_conflicts_exit_1(tmp_path, flat):
    path = tmp_path / "flat.json"
    path.write_text(json.dumps(flat))
    out = run("unflatten", str(path))
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.strip() != ""


@pytest.mark.parametrize(
    "mode,text",
    [("flatten", "42"), ("flatten", '"text"'), ("unflatten", "[1, 2]"), ("flatten", "{bad json"), ("unflatten", "")],
    ids=["flatten-number", "flatten-string", "unflatten-array", "invalid-json", "empty-input"],
)
def test_bad_input_exits_1(tmp_path, mode, text):
    path = tmp_path / "in.json"
    path.write_text(text)
    out = run(mode, str(path))
    assert out.returncode == 1
    assert out.stdout == ""


def test_usage_errors_exit_2(tmp_path):
    out = run("flatten", str(tmp_path / "missing.json"))
    assert out.returncode == 2 and out.stdout == ""
    out = run("explode", SAMPLE)
    assert out.returncode == 2 and out.stdout == ""


def test_deep_nesting_roundtrip(tmp_path):
    doc = current = {}
    for i in range(150):
        current["k"] = {} if i < 149 else [i]
        current = current["k"]
    flat = jflat("flatten", doc, tmp_path)
    assert flat == {".".join(["k"] * 150) + ".0": 149}
    assert jflat("unflatten", flat, tmp_path) == doc


def test_large_document(tmp_path):
    doc = {"items": [{"id": i, "name": f"n{i}", "dims": {"w": i % 7, "h.x": [i, i + 1]}} for i in range(5000)]}
    flat = jflat("flatten", doc, tmp_path)
    assert len(flat) == 5000 * 5
    assert flat["items.4321.dims.h\\.x.1"] == 4322
    assert jflat("unflatten", flat, tmp_path) == doc
