import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

NUM = re.compile(rb"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


class CsvError(Exception):
    pass


def parse(data):
    """Records of the CSV dialect in the spec (bytes in, lists of bytes out)."""
    records, rec, i, n = [], [], 0, len(data)
    while True:
        if i >= n and not rec:
            return records
        if not rec and i < n:
            if data[i:i + 2] == b"\r\n":
                i += 2
                continue
            if data[i:i + 1] == b"\n":
                i += 1
                continue
        buf = bytearray()
        if data[i:i + 1] == b'"':
            i += 1
            while True:
                if i >= n:
                    raise CsvError("unterminated quoted field")
                if data[i:i + 1] == b'"':
                    if data[i + 1:i + 2] == b'"':
                        buf += b'"'
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(data[i])
                i += 1
        while i < n and data[i:i + 1] not in (b",", b"\n"):
            if data[i:i + 2] == b"\r\n":
                i += 1
                break
            buf.append(data[i])
            i += 1
        rec.append(bytes(buf))
        if data[i:i + 1] == b",":
            i += 1
            continue
        if data[i:i + 1] == b"\n":
            i += 1
        records.append(rec)
        rec = []


def g(x):
    return ("%.6g" % x).encode()


def csvstat(data):
    """(exit_code, stdout_bytes) the spec requires for input bytes."""
    try:
        records = parse(data)
    except CsvError:
        return 1, b""
    if not records:
        return 1, b""
    header = records[0]
    cols = [{"count": 0, "empty": 0, "numeric": True, "min": 0.0, "max": 0.0, "sum": 0.0,
             "longest": 0, "distinct": set()} for _ in header]
    for rec in records[1:]:
        if len(rec) > len(header):
            return 1, b""
        for j, c in enumerate(cols):
            v = rec[j] if j < len(rec) else b""
            if not v:
                c["empty"] += 1
                continue
            if c["numeric"] and NUM.fullmatch(v):
                x = float(v)
                if c["count"] == 0 or x < c["min"]:
                    c["min"] = x
                if c["count"] == 0 or x > c["max"]:
                    c["max"] = x
                c["sum"] += x
            else:
                c["numeric"] = False
            c["count"] += 1
            c["longest"] = max(c["longest"], len(v))
            c["distinct"].add(v)
    out = []
    for name, c in zip(header, cols):
        if c["count"] == 0:
            out.append(name + b": empty count=0 empty=%d" % c["empty"])
        elif c["numeric"]:
            out.append(name + b": numeric count=%d empty=%d min=%s max=%s mean=%s" % (
                c["count"], c["empty"], g(c["min"]), g(c["max"]), g(c["sum"] / c["count"])))
        else:
            out.append(name + b": text count=%d empty=%d distinct=%d longest=%d" % (
                c["count"], c["empty"], len(c["distinct"]), c["longest"]))
    return 0, b"".join(l + b"\n" for l in out)


APP = Path("/app/csvstat")
ASAN_ENV = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=86",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87"}


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    work = tmp_path_factory.mktemp("build")
    tree = work / "csvstat"
    shutil.copytree(APP, tree, ignore=shutil.ignore_patterns("csvstat"))
    res = subprocess.run(["make", "-C", str(tree)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    srcs = sorted(str(p) for p in (tree / "src").glob("*.c"))
    asan = work / "csvstat-asan"
    res = subprocess.run(["gcc", "-std=c11", "-g", "-O1", "-fno-omit-frame-pointer",
                          "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                          f"-I{tree / 'include'}", *srcs, "-o", str(asan)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return {"plain": tree / "csvstat", "asan": asan}


def run(binary, data=None, args=(), env=None):
    return subprocess.run([str(binary), *args], input=data, capture_output=True, timeout=60, env=env)


def check(binaries, data, tmp_path=None):
    """Run both builds on data (stdin), compare with the spec, and fail on sanitizer reports."""
    want_rc, want_out = csvstat(data)
    for kind in ("asan", "plain"):
        res = run(binaries[kind], data, env=ASAN_ENV if kind == "asan" else None)
        err = res.stderr.decode("utf-8", "replace")
        assert "Sanitizer" not in err and "runtime error" not in err, f"{kind}: {err[-3000:]}"
        assert res.returncode == want_rc, f"{kind}: exit {res.returncode}, stderr: {err[-500:]}"
        assert res.stdout == want_out, kind
        if want_rc:
            assert err.strip(), "an error needs a message on stderr"


def test_installed_binary_is_fixed():
    data = (APP / "samples" / "inventory.csv").read_bytes()
    res = run(APP / "csvstat", args=[str(APP / "samples" / "inventory.csv")])
    assert res.returncode == 0
    assert res.stdout == csvstat(data)[1]


def test_sample_file(binaries):
    check(binaries, (APP / "samples" / "inventory.csv").read_bytes())


def test_distinct_counts_with_many_values(binaries):
    rows = [b"id,color"] + [b"%d,%s" % (i, [b"red", b"green", b"blue", b"cyan", b"teal", b"pink",
                                            b"gold", b"gray", b"navy", b"plum", b"rust"][i % 11])
                            for i in range(300)]
    check(binaries, b"\n".join(rows) + b"\n")


def test_long_values(binaries):
    rows = [b"k,v"] + [b"%d,%s" % (i, b"x" * n) for i, n in enumerate([15, 16, 17, 31, 32, 33, 64, 1000, 70000])]
    check(binaries, b"\n".join(rows) + b"\n")


def test_long_column_names(binaries):
    header = b",".join(b"column_with_a_rather_long_name_number_%d" % i for i in range(3)) + b"," + b"n" * 300
    check(binaries, header + b"\n1,2,3,4\n5,6,7,8\n")


def test_wide_file(binaries):
    header = b",".join(b"c%d" % i for i in range(200))
    rows = [b",".join(b"%d" % (r * j) for j in range(200)) for r in range(20)]
    check(binaries, header + b"\n" + b"\n".join(rows) + b"\n")


def test_short_records_have_empty_values(binaries):
    data = b"a,b,c,d\n1,2,3,4\n5\n6,7\n,,,\n8,9,10\n"
    check(binaries, data)
    assert csvstat(data)[1].splitlines()[3] == b"d: numeric count=1 empty=4 min=4 max=4 mean=4"


def test_crlf_input(binaries):
    data = b"name,qty\r\nbolt,3\r\n\r\nnut,4\r\nwasher,10\r\n"
    check(binaries, data)
    assert b"qty: numeric count=3 empty=0 min=3 max=10 mean=5.66667" in csvstat(data)[1]


def test_lone_cr_is_data(binaries):
    check(binaries, b"a,b\nx\ry,1\r\n\rz,2\n")


def test_number_grammar(binaries):
    for good in [b"1", b"-2", b"+3", b".5", b"5.", b"1e5", b"1E-2", b"-0", b"007", b"2.5e+3"]:
        data = b"v\n" + good + b"\n"
        check(binaries, data)
        assert b"numeric" in csvstat(data)[1], good
    for bad in [b"inf", b"nan", b"0x10", b" 5", b"5 ", b"1e", b"e5", b".", b"-", b"1.2.3", b"1,5"]:
        data = b'v\n"' + bad + b'"\n'
        check(binaries, data)
        assert b"text" in csvstat(data)[1], bad


def test_quoted_fields(binaries):
    data = (b'id,text,n\n1,"hello, world",1\n2,"say ""hi""",2\n3,"multi\nline\r\nvalue",3\n'
            b'4,"",4\n5,"ab"cd,5\n6,un"quoted,6\n7,"""",7\n')
    check(binaries, data)


def test_no_trailing_newline_and_trailing_comma(binaries):
    check(binaries, b"a,b\n1,\n2,3")


def test_header_only_and_empty_columns(binaries):
    check(binaries, b"a,b,c\n")
    data = b"a,b\n1,\n2,\n"
    check(binaries, data)
    assert csvstat(data)[1].splitlines()[1] == b"b: empty count=0 empty=2"


def test_unicode_bytes(binaries):
    check(binaries, "naïve,ключ\nå,日本語\nå,x\n".encode())


def test_error_unterminated_quote(binaries):
    check(binaries, b'a,b\n1,"open\n2,3\n')


def test_error_too_many_fields(binaries):
    check(binaries, b"a,b\n1,2\n3,4,5\n")


def test_error_no_header(binaries):
    check(binaries, b"")
    check(binaries, b"\n\r\n\n")


def test_file_argument_and_dash(binaries, tmp_path):
    path = tmp_path / "in.csv"
    data = b"x,y\n1,a\n2,b\n"
    path.write_bytes(data)
    for kind in ("plain", "asan"):
        assert run(binaries[kind], args=[str(path)], env=ASAN_ENV).stdout == csvstat(data)[1]
        assert run(binaries[kind], data, args=["-"], env=ASAN_ENV).stdout == csvstat(data)[1]


def test_missing_file_and_bad_usage(binaries, tmp_path):
    res = run(binaries["asan"], args=[str(tmp_path / "nope.csv")], env=ASAN_ENV)
    assert res.returncode == 2 and res.stderr and not res.stdout
    res = run(binaries["asan"], args=["a", "b"], env=ASAN_ENV)
    assert res.returncode == 2 and res.stderr and not res.stdout


def test_random_inputs(binaries):
    rnd = random.Random(2024)
    alphabet = [b"a", b"b", b",", b'"', b"\n", b"\r", b"\r\n", b"1", b"2", b".", b"e", b"-", b" ",
                b"x" * 20, b"\xc3\xa9", b"nan", b"0x1", b"17"]
    for _ in range(150):
        data = b"".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 80)))
        check(binaries, data)


def test_large_file(binaries):
    rnd = random.Random(7)
    rows = [b"id,city,amount,code,note,ratio"]
    cities = [b"Lisbon", b"Osaka", b"Lyon", b"Pune", b"Quito", b"Oslo", b"Cairo", b"Perth", b"Riga"]
    for i in range(6000):
        rows.append(b",".join([
            b"%d" % i, rnd.choice(cities) + b"%d" % (i % 97),
            b"%d.%02d" % (rnd.randint(0, 9999), rnd.randint(0, 99)),
            b'"C,%05d"' % rnd.randint(0, 3000), b"n" * rnd.randint(0, 40),
            b"%de-%d" % (rnd.randint(1, 9), rnd.randint(0, 5))][: rnd.randint(3, 6)]))
    check(binaries, b"\r\n".join(rows) + b"\r\n")
