import os
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/csvjoin"
DATA = Path("/app/data")
HERE = Path(__file__).parent


def run(*args, cwd=None):
    return subprocess.run([TOOL, *args], capture_output=True, timeout=60, cwd=cwd)


def join(tmp_path, left, right, *opts):
    lp, rp = tmp_path / "left.csv", tmp_path / "right.csv"
    lp.write_bytes(left.encode("utf-8"))
    rp.write_bytes(right.encode("utf-8"))
    out = run(*opts, str(lp), str(rp))
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout.decode("utf-8")


def sample(kind):
    out = run("--type", kind, "--on", "id=customer_id", "customers.csv", "orders.csv", cwd=DATA)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout.decode("utf-8")


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


@pytest.mark.parametrize("kind", ["inner", "left", "outer"])
def test_sample_join_exact(kind):
    assert sample(kind) == (HERE / f"expected_{kind}.csv").read_text(encoding="utf-8")


def test_default_type_is_inner():
    out = run("--on", "id=customer_id", "customers.csv", "orders.csv", cwd=DATA)
    assert out.stdout.decode() == sample("inner")


def test_same_name_key(tmp_path):
    out = join(tmp_path, "id,a\n1,x\n2,y\n", "b,id\nB1,2\nB2,1\n", "--on", "id")
    assert out == "id,a,b\n1,x,B2\n2,y,B1\n"


def test_composite_keys(tmp_path):
    left = "region,sku,stock\neu,A,5\nus,A,7\neu,B,1\n"
    right = "sku,zone,price\nA,us,9.5\nA,eu,9.0\nB,us,3.0\n"
    out = join(tmp_path, left, right, "--on", "region=zone,sku")
    assert out == "region,sku,stock,price\neu,A,5,9.0\nus,A,7,9.5\n"


def test_keys_trimmed_values_untouched(tmp_path):
    left = "k,v\n  a\t, padded value \n"
    right = "k,w\na ,\t tab\n"
    out = join(tmp_path, left, right, "--on", "k")
    assert out == "k,v,w\na, padded value ,\t tab\n"


def test_empty_keys_never_match(tmp_path):
    left = "k,v\n,l1\n  ,l2\nx,l3\n"
    right = "k,w\n,r1\nx,r2\n \t,r3\n"
    assert join(tmp_path, left, right, "--on", "k") == "k,v,w\nx,l3,r2\n"
    assert join(tmp_path, left, right, "--on", "k", "--type", "left") == "k,v,w\n,l1,\n,l2,\nx,l3,r2\n"
    assert join(tmp_path, left, right, "--type", "outer", "--on", "k") == (
        "k,v,w\n,l1,\n,l2,\nx,l3,r2\n,,r1\n,,r3\n"
    )


def test_many_to_many_order(tmp_path):
    left = "k,l\n1,a\n2,b\n1,c\n"
    right = "k,r\n1,X\n3,Z\n1,Y\n"
    assert join(tmp_path, left, right, "--on", "k") == "k,l,r\n1,a,X\n1,a,Y\n1,c,X\n1,c,Y\n"


def test_column_name_collision_renamed(tmp_path):
    left = "id,name,total\n1,L,5\n"
    right = "ref,name,total,extra\n1,R,6,e\n"
    assert join(tmp_path, left, right, "--on", "id=ref") == "id,name,total,name_right,total_right,extra\n1,L,5,R,6,e\n"


def test_key_column_name_from_left(tmp_path):
    out = join(tmp_path, "cust,v\n7,a\n", "customer,w\n7,b\n8,c\n", "--on", "cust=customer", "--type", "outer")
    assert out == "cust,v,w\n7,a,b\n8,,c\n"


def test_output_quoting_rules(tmp_path):
    left = 'k,v\n1,"a,b"\n2,"say ""hi"""\n3,"line1\nline2"\n4,plain text\n5,\n6,it\'s\n7,"cr\rhere"\n'
    right = "k,w\n1,x\n2,x\n3,x\n4,x\n5,x\n6,x\n7,x\n"
    out = join(tmp_path, left, right, "--on", "k")
    assert out == (
        'k,v,w\n1,"a,b",x\n2,"say ""hi""",x\n3,"line1\nline2",x\n4,plain text,x\n5,,x\n'
        "6,it's,x\n" '7,"cr\rhere",x\n'
    )


def test_crlf_input_same_as_lf(tmp_path):
    lf = join(tmp_path, "k,v\n1,a\n2,b\n", "k,w\n2,c\n", "--on", "k")
    crlf = join(tmp_path, "k,v\r\n1,a\r\n2,b\r\n", "k,w\r\n2,c\r\n", "--on", "k")
    assert lf == crlf == "k,v,w\n2,b,c\n"


def test_header_only_inputs(tmp_path):
    assert join(tmp_path, "k,v\n", "k,w\n", "--on", "k", "--type", "outer") == "k,v,w\n"


@pytest.mark.parametrize(
    "left,right,keys",
    [
        ("k,v\n1,a\n", "k,w\n1,b\n", "nope"),
        ("k,v\n1,a\n", "k,w\n1,b\n", "k=missing"),
        ("k,v\n1,a,extra\n", "k,w\n1,b\n", "k"),
        ("k,v\n1,a\n", "k,w\n1\n", "k"),
    ],
    ids=["left-key-missing", "right-key-missing", "left-ragged", "right-ragged"],
)
def test_data_errors_exit_1(tmp_path, left, right, keys):
    lp, rp = tmp_path / "l.csv", tmp_path / "r.csv"
    lp.write_text(left)
    rp.write_text(right)
    out = run("--on", keys, str(lp), str(rp))
    assert out.returncode == 1
    assert out.stdout == b""
    assert out.stderr.strip() != b""


@pytest.mark.parametrize(
    "args",
    [
        ["customers.csv", "orders.csv"],
        ["--type", "cross", "--on", "id=customer_id", "customers.csv", "orders.csv"],
        ["--on", "id=customer_id", "customers.csv"],
        ["--on", "id=customer_id", "customers.csv", "missing.csv"],
    ],
    ids=["no-on", "bad-type", "one-file", "missing-file"],
)
def test_usage_errors_exit_2(args):
    out = run(*args, cwd=DATA)
    assert out.returncode == 2
    assert out.stdout == b""


def test_large_join(tmp_path):
    left = "id,name\n" + "".join(f"{i},n{i}\n" for i in range(20000))
    right = "ref,val\n" + "".join(f"{(i * 7) % 25000},v{i}\n" for i in range(20000))
    out = join(tmp_path, left, right, "--on", "id=ref", "--type", "left").splitlines()
    assert out[0] == "id,name,val"
    assert len(out) == 1 + 20000
    assert out[1 + 7] == "7,n7,v1"
    assert out[1 + 6] == "6,n6,v17858"
    assert out[1 + 3] == "3,n3,"
    matched = sum(1 for line in out[1:] if not line.endswith(","))
    assert matched == len({(i * 7) % 25000 for i in range(20000)} & set(range(20000)))


def test_inputs_not_modified():
    before = {p.name: p.read_bytes() for p in DATA.iterdir()}
    sample("outer")
    assert {p.name: p.read_bytes() for p in DATA.iterdir()} == before
