import json
import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/csv2json"
SAMPLE = "/app/data/invoices.csv"


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, timeout=60)


def convert(tmp_path, content, *opts):
    path = tmp_path / "in.csv"
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    out = run(*opts, str(path))
    assert out.returncode == 0, out.stderr.decode()
    return json.loads(out.stdout.decode("utf-8"))


def fails(tmp_path, content, *opts):
    path = tmp_path / "in.csv"
    path.write_bytes(content.encode("utf-8"))
    return run(*opts, str(path))


def types(rows, key):
    return [type(r[key]).__name__ for r in rows]


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_sample_invoices():
    out = run(SAMPLE)
    assert out.returncode == 0, out.stderr.decode()
    assert json.loads(out.stdout) == [
        {"invoice_id": 1001, "customer": "Acme, Inc.", "zip": "02134", "amount": 1200.5,
         "paid": True, "notes": None, "discount": 0},
        {"invoice_id": 1002, "customer": "Globex", "zip": "94105", "amount": 980.0,
         "paid": False, "notes": 'Net 30; "priority" client', "discount": None},
        {"invoice_id": 1003, "customer": "Initech\r\nAccounts Payable", "zip": "10001",
         "amount": 15.75, "paid": False, "notes": "multi\r\nline note", "discount": 5},
        {"invoice_id": 1004, "customer": "Umbrella", "zip": "-", "amount": 0.0,
         "paid": True, "notes": "-", "discount": None},
    ]


def test_sample_types_and_key_order():
    rows = json.loads(run(SAMPLE).stdout)
    assert list(rows[0]) == ["invoice_id", "customer", "zip", "amount", "paid", "notes", "discount"]
    assert types(rows, "amount") == ["float"] * 4
    assert types(rows, "invoice_id") == ["int"] * 4


def test_integer_columns(tmp_path):
    rows = convert(tmp_path, "n,m\n-12,0\n7,123456789012345678901\n")
    assert [r["n"] for r in rows] == [-12, 7]
    assert [r["m"] for r in rows] == [0, 123456789012345678901]
    assert types(rows, "n") == ["int", "int"]


def test_leading_zeros_make_a_string_column(tmp_path):
    rows = convert(tmp_path, "zip,code\n02134,1\n94105,007\n")
    assert [r["zip"] for r in rows] == ["02134", "94105"]
    assert [r["code"] for r in rows] == ["1", "007"]


def test_float_columns_written_with_decimal_point(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("price\n3\n2.50\n-0.125\n")
    out = run(str(path))
    assert out.returncode == 0
    rows = json.loads(out.stdout)
    assert [r["price"] for r in rows] == [3.0, 2.5, -0.125]
    assert types(rows, "price") == ["float"] * 3


def test_number_like_values_that_are_not_numbers(tmp_path):
    for bad in ["1e5", "+5", " 42", "4.", ".5", "1,5", "NaN"]:
        content = 'v\n10\n"' + bad + '"\n'
        rows = convert(tmp_path, content)
        assert rows == [{"v": "10"}, {"v": bad}], bad


def test_boolean_columns_any_case(tmp_path):
    rows = convert(tmp_path, "flag,other\nTrue,true\nFALSE,yes\nfalse,false\n")
    assert [r["flag"] for r in rows] == [True, False, False]
    assert [r["other"] for r in rows] == ["true", "yes", "false"]


def test_empty_values_are_null_and_empty_column_is_null(tmp_path):
    rows = convert(tmp_path, "a,b,c\n1,,\n,x,\n3,,\n")
    assert rows == [{"a": 1, "b": None, "c": None}, {"a": None, "b": "x", "c": None}, {"a": 3, "b": None, "c": None}]


def test_quoted_fields(tmp_path):
    content = 'name,quote\n"Smith, John","He said ""hi"""\n"multi\nline","a,b,""c"""\n""," "\n'
    rows = convert(tmp_path, content)
    assert rows == [
        {"name": "Smith, John", "quote": 'He said "hi"'},
        {"name": "multi\nline", "quote": 'a,b,"c"'},
        {"name": None, "quote": " "},
    ]


def test_crlf_lf_and_bom(tmp_path):
    lf = convert(tmp_path, "id,name\n1,a\n2,b\n")
    crlf = convert(tmp_path, "\ufeffid,name\r\n1,a\r\n2,b\r\n")
    assert lf == crlf == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    no_final_newline = convert(tmp_path, "id,name\n1,a\n2,b")
    assert no_final_newline == lf


def test_empty_lines_skipped(tmp_path):
    rows = convert(tmp_path, "\nid,v\n\n1,x\n\n\n2,y\n\n")
    assert rows == [{"id": 1, "v": "x"}, {"id": 2, "v": "y"}]


def test_short_records_padded_with_null(tmp_path):
    rows = convert(tmp_path, "a,b,c\n1\n2,3\n")
    assert rows == [{"a": 1, "b": None, "c": None}, {"a": 2, "b": 3, "c": None}]


def test_header_only_gives_empty_array(tmp_path):
    assert convert(tmp_path, "a,b,c\n") == []


def test_custom_delimiters(tmp_path):
    rows = convert(tmp_path, 'a;b\n1,5;"x;y"\n2;z\n', "-d", ";")
    assert rows == [{"a": "1,5", "b": "x;y"}, {"a": "2", "b": "z"}]
    rows = convert(tmp_path, "a\tb\n1\t2.5\n", "-d", "\t")
    assert rows == [{"a": 1, "b": 2.5}]


def test_unicode_preserved(tmp_path):
    rows = convert(tmp_path, "city,note\nZürich,☃ snow\n東京,\"日本, 東京\"\n")
    assert rows == [{"city": "Zürich", "note": "☃ snow"}, {"city": "東京", "note": "日本, 東京"}]


@pytest.mark.parametrize(
    "content",
    ["a,b\n1,2,3\n", "a,b,a\n1,2,3\n", 'a,b\n1,"open\n', ""],
    ids=["too-many-fields", "duplicate-column", "unterminated-quote", "empty-file"],
)
def test_malformed_csv_exits_1(tmp_path, content):
    out = fails(tmp_path, content)
    assert out.returncode == 1
    assert out.stdout == b""
    assert out.stderr.strip() != b""


def test_bad_arguments_exit_2(tmp_path):
    out = run(str(tmp_path / "missing.csv"))
    assert out.returncode == 2 and out.stdout == b""
    good = tmp_path / "g.csv"
    good.write_text("a\n1\n")
    out = run("-d", "::", str(good))
    assert out.returncode == 2 and out.stdout == b""
    assert run().returncode == 2


def test_large_file(tmp_path):
    lines = ["id,score,label,active"] + [
        f"{i},{i / 4},\"row {i}, ok\",{'true' if i % 2 else 'false'}" for i in range(20000)
    ]
    rows = convert(tmp_path, "\n".join(lines) + "\n")
    assert len(rows) == 20000
    assert rows[12345] == {"id": 12345, "score": 3086.25, "label": "row 12345, ok", "active": True}
    assert type(rows[4]["score"]) is float and rows[4]["score"] == 1.0


def test_input_not_modified():
    before = Path(SAMPLE).read_bytes()
    run(SAMPLE)
    assert Path(SAMPLE).read_bytes() == before
