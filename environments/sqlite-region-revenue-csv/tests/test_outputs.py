import csv
import hashlib
import io
import os
import sqlite3
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

TOOL = "/app/region_report.sh"
SHOP_DB = "/app/data/shop.db"
HEADER = "region,month,orders,revenue"

SCHEMA = """
CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, ordered_at TEXT NOT NULL,
                    status TEXT NOT NULL);
CREATE TABLE order_items(id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL, sku TEXT NOT NULL,
                         qty INTEGER NOT NULL, unit_price_cents INTEGER NOT NULL);
"""


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def make_db(path, customers, orders, items):
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO customers VALUES (?,?,?)", customers)
    con.executemany("INSERT INTO orders VALUES (?,?,?,?)", orders)
    con.executemany("INSERT INTO order_items VALUES (?,?,?,?,?)", items)
    con.commit()
    con.close()
    return str(path)


def expected_rows(db_path):
    """Reference computed in Python, independently of SQL aggregation."""
    con = sqlite3.connect(db_path)
    regions = {}
    for cid, region in con.execute("SELECT id, region FROM customers"):
        r = (region or "").strip(" ")
        regions[cid] = r if r else "UNKNOWN"
    cents = defaultdict(int)
    for oid, qty, price in con.execute("SELECT order_id, qty, unit_price_cents FROM order_items"):
        cents[oid] += qty * price
    groups = defaultdict(lambda: [0, 0])
    for oid, cid, ts, status in con.execute("SELECT id, customer_id, ordered_at, status FROM orders"):
        if status != "paid":
            continue
        g = groups[(regions[cid], ts[:7])]
        g[0] += 1
        g[1] += cents[oid]
    con.close()
    rows = []
    for (region, month) in sorted(groups, key=lambda k: (k[0].encode(), k[1])):
        n, c = groups[(region, month)]
        rows.append([region, month, str(n), f"{c // 100}.{c % 100:02d}"])
    return rows


def read_csv(path):
    text = Path(path).read_bytes().decode("utf-8")
    return text, list(csv.reader(io.StringIO(text, newline="")))


@pytest.fixture
def tricky_db(tmp_path):
    customers = [
        (1, "Ann", "North"), (2, "Ben", "  North "), (3, "Cat", None), (4, "Dan", "   "),
        (5, "Eve", 'Asia, "Pacific"'), (6, "Fox", "north"), (7, "Gil", "South"),
    ]
    orders = [
        (1, 1, "2024-01-05 10:00:00", "paid"), (2, 2, "2024-01-20 23:59:59", "paid"),
        (3, 1, "2024-02-01 00:00:00", "paid"), (4, 3, "2023-01-15 12:00:00", "paid"),
        (5, 4, "2023-01-16 12:00:00", "paid"), (6, 5, "2024-03-03 03:03:03", "paid"),
        (7, 6, "2024-01-07 08:00:00", "paid"), (8, 7, "2024-01-08 08:00:00", "pending"),
        (9, 7, "2024-01-09 08:00:00", "refunded"), (10, 7, "2024-01-10 08:00:00", "cancelled"),
        (11, 7, "2024-04-01 00:00:00", "paid"),
    ]
    items = [
        (1, 1, "A", 2, 1050), (2, 1, "B", 1, 5), (3, 2, "A", 3, 999), (4, 3, "C", 1, 100000000),
        (5, 4, "A", 1, 1), (6, 5, "B", 10, 10), (7, 6, "C", 1, 250), (8, 7, "A", 1, 700),
        (9, 8, "A", 5, 5000), (10, 9, "B", 5, 5000), (11, 10, "C", 5, 5000),
        # order 11 has no items at all
    ]
    return make_db(tmp_path / "tricky.db", customers, orders, items)


def test_report_script_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_generated_report_matches_shop_db():
    text, rows = read_csv("/app/out/region_revenue.csv")
    assert rows[0] == HEADER.split(",")
    assert rows[1:] == expected_rows(SHOP_DB)


def test_rerun_on_shop_db_matches(tmp_path):
    out = tmp_path / "r.csv"
    res = run(SHOP_DB, str(out))
    assert res.returncode == 0, res.stderr
    _, rows = read_csv(out)
    assert rows[1:] == expected_rows(SHOP_DB)


def test_header_and_line_endings(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    assert run(tricky_db, str(out)).returncode == 0
    data = out.read_bytes()
    assert data.startswith(b"region,month,orders,revenue\n")
    assert b"\r" not in data
    assert data.endswith(b"\n") and not data.endswith(b"\n\n")


def test_only_paid_orders_count(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    run(tricky_db, str(out))
    _, rows = read_csv(out)
    south = [r for r in rows[1:] if r[0] == "South"]
    assert south == [["South", "2024-04", "1", "0.00"]]


def test_region_trimmed_and_merged(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    run(tricky_db, str(out))
    _, rows = read_csv(out)
    assert ["North", "2024-01", "2", "51.02"] in rows
    assert ["North", "2024-02", "1", "1000000.00"] in rows


def test_region_case_sensitive(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    run(tricky_db, str(out))
    _, rows = read_csv(out)
    assert ["north", "2024-01", "1", "7.00"] in rows


def test_null_and_blank_region_are_unknown(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    run(tricky_db, str(out))
    _, rows = read_csv(out)
    assert [r for r in rows if r[0] == "UNKNOWN"] == [["UNKNOWN", "2023-01", "2", "1.01"]]


def test_csv_quoting_of_comma_and_quote(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    run(tricky_db, str(out))
    text, rows = read_csv(out)
    assert '"Asia, ""Pacific""",2024-03,1,2.50\n' in text
    assert ['Asia, "Pacific"', "2024-03", "1", "2.50"] in rows


def test_order_without_items_counts_with_zero_revenue(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    run(tricky_db, str(out))
    _, rows = read_csv(out)
    assert ["South", "2024-04", "1", "0.00"] in rows


def test_full_tricky_report_order(tmp_path, tricky_db):
    out = tmp_path / "r.csv"
    run(tricky_db, str(out))
    _, rows = read_csv(out)
    assert rows[1:] == expected_rows(tricky_db)
    assert [r[0] for r in rows[1:]] == sorted((r[0] for r in rows[1:]), key=str.encode)


def test_no_paid_orders_gives_header_only(tmp_path):
    db = make_db(tmp_path / "none.db", [(1, "A", "X")], [(1, 1, "2024-01-01 00:00:00", "pending")], [])
    out = tmp_path / "r.csv"
    res = run(db, str(out))
    assert res.returncode == 0
    assert out.read_text() == HEADER + "\n"


def test_creates_parent_dirs_and_overwrites(tmp_path, tricky_db):
    out = tmp_path / "deep" / "er" / "r.csv"
    assert run(tricky_db, str(out)).returncode == 0
    first = out.read_text()
    out.write_text("garbage\n" * 100)
    assert run(tricky_db, str(out)).returncode == 0
    assert out.read_text() == first


def test_missing_db_exits_1_and_creates_nothing(tmp_path):
    db = tmp_path / "nope.db"
    out = tmp_path / "r.csv"
    res = run(str(db), str(out))
    assert res.returncode == 1
    assert res.stderr.strip()
    assert not db.exists()
    assert not out.exists()


@pytest.mark.parametrize("args", [[], [SHOP_DB], [SHOP_DB, "/tmp/a.csv", "extra"]])
def test_wrong_arguments_exit_2(args):
    res = run(*args)
    assert res.returncode == 2
    assert res.stderr.strip()


def test_database_not_modified(tmp_path, tricky_db):
    before = hashlib.sha256(Path(tricky_db).read_bytes()).hexdigest()
    run(tricky_db, str(tmp_path / "r.csv"))
    assert hashlib.sha256(Path(tricky_db).read_bytes()).hexdigest() == before


def test_large_random_database(tmp_path):
    import random
    rnd = random.Random(99)
    regs = ["Alpha", " Beta", "Gamma ", None, "", "Delta, Inc", "Ω-Zone"]
    customers = [(i, f"c{i}", rnd.choice(regs)) for i in range(1, 201)]
    orders, items, iid = [], [], 1
    for o in range(1, 3001):
        ts = f"{rnd.choice([2022, 2023, 2024])}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d} 01:02:03"
        orders.append((o, rnd.randint(1, 200), ts, rnd.choice(["paid", "paid", "pending", "refunded"])))
        for _ in range(rnd.randint(0, 3)):
            items.append((iid, o, "S", rnd.randint(1, 9), rnd.randint(1, 99999)))
            iid += 1
    db = make_db(tmp_path / "big.db", customers, orders, items)
    out = tmp_path / "big.csv"
    res = run(db, str(out))
    assert res.returncode == 0, res.stderr
    _, rows = read_csv(out)
    assert rows[0] == HEADER.split(",")
    assert rows[1:] == expected_rows(db)
