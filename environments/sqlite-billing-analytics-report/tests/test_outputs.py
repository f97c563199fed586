import hashlib
import os
import sqlite3
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

TOOL = "/app/analytics.sh"
BILLING_DB = "/app/data/billing.db"
BILLING_SQL = Path(__file__).with_name("billing.sql").read_text()
FILES = ("monthly_revenue.csv", "top_accounts.csv", "cohort_retention.csv")
HEADERS = {
    "monthly_revenue.csv": "month,gross,refunds,net,running_net,mom_pct",
    "top_accounts.csv": "country,rank,account_id,account_name,lifetime_net",
    "cohort_retention.csv": "cohort,size,m0,m1,m2,m3",
}
SCHEMA = """
CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL,
                      signup_date TEXT NOT NULL);
CREATE TABLE invoices(id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, issued_on TEXT NOT NULL,
                      amount_cents INTEGER NOT NULL, status TEXT NOT NULL);
CREATE TABLE refunds(id INTEGER PRIMARY KEY, invoice_id INTEGER NOT NULL, refunded_on TEXT NOT NULL,
                     amount_cents INTEGER NOT NULL);
"""


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def make_db(path, accounts, invoices, refunds=()):
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO accounts VALUES (?,?,?,?)", accounts)
    con.executemany("INSERT INTO invoices VALUES (?,?,?,?,?)", invoices)
    con.executemany("INSERT INTO refunds VALUES (?,?,?,?)", refunds)
    con.commit()
    con.close()
    return str(path)


def money(c):
    return f"{'-' if c < 0 else ''}{abs(c) // 100}.{abs(c) % 100:02d}"


def month_index(m):
    return int(m[:4]) * 12 + int(m[5:7]) - 1


def month_name(i):
    return f"{i // 12}-{i % 12 + 1:02d}"


def pct(net, prev):
    if prev is None or prev == 0:
        return ""
    num, den = 1000 * (net - prev), abs(prev)
    q = (2 * abs(num) + den) // (2 * den)
    if q == 0:
        return "0.0"
    return f"{'-' if num < 0 else ''}{q // 10}.{q % 10}"


def reference(rows):
    accounts, invoices, refunds = rows
    paid = {i[0]: i for i in invoices if i[4] == "paid"}
    counted = [r for r in refunds if r[1] in paid]
    gross, refm = defaultdict(int), defaultdict(int)
    for i in paid.values():
        gross[month_index(i[2])] += i[3]
    for r in counted:
        refm[month_index(r[2])] += r[3]
    monthly = [HEADERS["monthly_revenue.csv"]]
    active = set(gross) | set(refm)
    if active:
        running, prev = 0, None
        for m in range(min(active), max(active) + 1):
            net = gross[m] - refm[m]
            running += net
            monthly.append(",".join([month_name(m), money(gross[m]), money(refm[m]), money(net),
                                     money(running), pct(net, prev)]))
            prev = net
    life = defaultdict(int)
    has_paid = set()
    for i in paid.values():
        life[i[1]] += i[3]
        has_paid.add(i[1])
    for r in counted:
        life[paid[r[1]][1]] -= r[3]
    info = {a[0]: a for a in accounts}
    by_country = defaultdict(list)
    for aid in has_paid:
        if life[aid] > 0 and aid in info:
            by_country[info[aid][2]].append(aid)
    top = [HEADERS["top_accounts.csv"]]
    for country in sorted(by_country):
        values = sorted((life[a] for a in by_country[country]), reverse=True)
        ranked = sorted(((values.index(life[a]) + 1, a) for a in by_country[country]))
        for rank, a in ranked:
            if rank <= 3:
                top.append(f"{country},{rank},{a},{info[a][1]},{money(life[a])}")
    cohorts = defaultdict(list)
    for a in accounts:
        cohorts[a[3][:7]].append(a[0])
    active_months = defaultdict(set)
    for i in paid.values():
        active_months[i[1]].add(month_index(i[2]))
    coh = [HEADERS["cohort_retention.csv"]]
    for c in sorted(cohorts):
        base = month_index(c)
        ms = [sum(1 for a in cohorts[c] if base + k in active_months[a]) for k in range(4)]
        coh.append(",".join([c, str(len(cohorts[c]))] + [str(x) for x in ms]))
    return {
        "monthly_revenue.csv": "\n".join(monthly) + "\n",
        "top_accounts.csv": "\n".join(top) + "\n",
        "cohort_retention.csv": "\n".join(coh) + "\n",
    }


def rows_of(path):
    con = sqlite3.connect(path)
    out = (con.execute("SELECT * FROM accounts").fetchall(),
           con.execute("SELECT * FROM invoices").fetchall(),
           con.execute("SELECT * FROM refunds").fetchall())
    con.close()
    return out


def billing_rows():
    con = sqlite3.connect(":memory:")
    con.executescript(BILLING_SQL)
    out = (con.execute("SELECT * FROM accounts").fetchall(),
           con.execute("SELECT * FROM invoices").fetchall(),
           con.execute("SELECT * FROM refunds").fetchall())
    con.close()
    return out


ACCOUNTS = [
    (1, "Acme", "DE", "2023-11-15"), (2, "Bolt", "DE", "2023-11-02"), (3, "Core", "DE", "2023-12-31"),
    (4, "Dyna", "DE", "2024-01-01"), (5, "Echo", "DE", "2024-01-20"), (6, "Flux", "FR", "2023-11-30"),
    (7, "Gale", "FR", "2024-03-01"), (8, "Halo", "JP", "2024-02-10"),
]
INVOICES = [
    (1, 1, "2023-11-20", 2000, "paid"), (2, 1, "2024-02-01", 2000, "paid"),
    (3, 2, "2023-11-05", 4000, "paid"), (4, 3, "2024-01-05", 4000, "paid"),
    (5, 4, "2024-01-05", 4000, "paid"), (6, 5, "2024-01-25", 1000, "paid"),
    (7, 6, "2023-12-01", 999, "void"), (8, 6, "2024-05-01", 3, "paid"),
    (9, 7, "2024-03-02", 5000, "open"), (10, 8, "2024-02-11", 700, "paid"),
    (11, 2, "2023-12-06", 0, "paid"),
]
REFUNDS = [
    (1, 3, "2024-01-15", 4000), (2, 7, "2023-12-02", 999), (3, 9, "2024-03-05", 100),
    (4, 10, "2024-02-12", 200), (5, 1, "2023-11-21", 3),
]


@pytest.fixture
def hidden(tmp_path):
    db = make_db(tmp_path / "h.db", ACCOUNTS, INVOICES, REFUNDS)
    out = tmp_path / "out"
    res = run(db, str(out))
    assert res.returncode == 0, res.stderr
    return db, out


def test_script_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


@pytest.mark.parametrize("name", FILES)
def test_billing_reports_match_reference(name):
    assert Path("/app/reports", name).read_text() == reference(billing_rows())[name]


def test_headers_and_newlines(hidden):
    _, out = hidden
    for name in FILES:
        data = (out / name).read_bytes()
        assert data.startswith(HEADERS[name].encode() + b"\n")
        assert b"\r" not in data and data.endswith(b"\n")


def test_monthly_gap_months_filled(hidden):
    _, out = hidden
    lines = (out / "monthly_revenue.csv").read_text().splitlines()
    assert [l.split(",")[0] for l in lines[1:]] == [
        "2023-11", "2023-12", "2024-01", "2024-02", "2024-03", "2024-04", "2024-05"]
    assert lines[5] == "2024-03,0.00,0.00,0.00,134.97,-100.0"
    assert lines[6] == "2024-04,0.00,0.00,0.00,134.97,"
    assert lines[7] == "2024-05,0.03,0.00,0.03,135.00,"


def test_monthly_refunds_only_on_paid_invoices(hidden):
    _, out = hidden
    lines = (out / "monthly_revenue.csv").read_text().splitlines()
    assert lines[1] == "2023-11,60.00,0.03,59.97,59.97,"
    assert lines[2] == "2023-12,0.00,0.00,0.00,59.97,-100.0"


def test_monthly_refund_month_and_pct(hidden):
    _, out = hidden
    lines = (out / "monthly_revenue.csv").read_text().splitlines()
    assert lines[3] == "2024-01,90.00,40.00,50.00,109.97,"
    assert lines[4] == "2024-02,27.00,2.00,25.00,134.97,-50.0"


def test_monthly_matches_reference(hidden):
    db, out = hidden
    assert (out / "monthly_revenue.csv").read_text() == reference(rows_of(db))["monthly_revenue.csv"]


def test_mom_pct_exact_half_away_from_zero(tmp_path):
    accounts = [(1, "A", "DE", "2024-01-01")]
    invoices = [(1, 1, "2024-01-10", 2000, "paid"), (2, 1, "2024-02-10", 2003, "paid"),
                (3, 1, "2024-03-10", 2000, "paid"), (4, 1, "2024-04-10", 6001, "paid"),
                (5, 1, "2024-05-10", 6000, "paid")]
    db = make_db(tmp_path / "p.db", accounts, invoices)
    out = tmp_path / "o"
    assert run(db, str(out)).returncode == 0
    pcts = [l.split(",")[5] for l in (out / "monthly_revenue.csv").read_text().splitlines()[1:]]
    assert pcts == ["", "0.2", "-0.1", "200.1", "0.0"]


def test_top_accounts_competition_ranking(hidden):
    _, out = hidden
    lines = (out / "top_accounts.csv").read_text().splitlines()
    assert [l for l in lines if l.startswith("DE,")] == [
        "DE,1,3,Core,40.00", "DE,1,4,Dyna,40.00", "DE,3,1,Acme,39.97"]


def test_top_accounts_excludes_non_positive(hidden):
    _, out = hidden
    text = (out / "top_accounts.csv").read_text()
    assert ",2,Bolt," not in text
    assert ",7,Gale," not in text
    assert "FR,1,6,Flux,0.03" in text
    assert "JP,1,8,Halo,5.00" in text


def test_top_accounts_ties_keep_more_than_three(tmp_path):
    accounts = [(i, f"N{i}", "US", "2024-01-01") for i in range(1, 7)]
    invoices = [(1, 1, "2024-01-02", 500, "paid"), (2, 2, "2024-01-02", 300, "paid"),
                (3, 3, "2024-01-02", 300, "paid"), (4, 4, "2024-01-02", 100, "paid"),
                (5, 5, "2024-01-02", 100, "paid"), (6, 6, "2024-01-02", 50, "paid")]
    db = make_db(tmp_path / "t.db", accounts, invoices)
    out = tmp_path / "o"
    run(db, str(out))
    assert (out / "top_accounts.csv").read_text().splitlines()[1:] == [
        "US,1,1,N1,5.00", "US,2,2,N2,3.00", "US,2,3,N3,3.00"]


def test_cohort_retention(hidden):
    _, out = hidden
    assert (out / "cohort_retention.csv").read_text().splitlines() == [
        "cohort,size,m0,m1,m2,m3",
        "2023-11,3,2,1,0,1",
        "2023-12,1,0,1,0,0",
        "2024-01,2,2,0,0,0",
        "2024-02,1,1,0,0,0",
        "2024-03,1,0,0,0,0",
    ]


def test_no_paid_activity(tmp_path):
    db = make_db(tmp_path / "n.db", [(1, "A", "DE", "2024-01-05")], [(1, 1, "2024-01-06", 100, "void")])
    out = tmp_path / "o"
    assert run(db, str(out)).returncode == 0
    assert (out / "monthly_revenue.csv").read_text() == HEADERS["monthly_revenue.csv"] + "\n"
    assert (out / "top_accounts.csv").read_text() == HEADERS["top_accounts.csv"] + "\n"
    assert (out / "cohort_retention.csv").read_text() == "cohort,size,m0,m1,m2,m3\n2024-01,1,0,0,0,0\n"


def test_missing_db_exit_1_nothing_created(tmp_path):
    db, out = tmp_path / "x.db", tmp_path / "o"
    res = run(str(db), str(out))
    assert res.returncode == 1
    assert res.stderr.strip()
    assert not db.exists() and not out.exists()


def test_wrong_arguments_exit_2():
    for args in ([], [BILLING_DB], [BILLING_DB, "/tmp/o", "x"]):
        res = run(*args)
        assert res.returncode == 2 and res.stderr.strip()


def test_database_not_modified(tmp_path):
    db = make_db(tmp_path / "m.db", ACCOUNTS, INVOICES, REFUNDS)
    before = hashlib.sha256(Path(db).read_bytes()).hexdigest()
    run(db, str(tmp_path / "o"))
    assert hashlib.sha256(Path(db).read_bytes()).hexdigest() == before


def test_overwrites_existing_reports(tmp_path):
    db = make_db(tmp_path / "w.db", ACCOUNTS, INVOICES, REFUNDS)
    out = tmp_path / "o"
    out.mkdir()
    for name in FILES:
        (out / name).write_text("stale\n" * 50)
    assert run(db, str(out)).returncode == 0
    expected = reference(rows_of(db))
    for name in FILES:
        assert (out / name).read_text() == expected[name]


def test_large_random_database(tmp_path):
    import random
    rnd = random.Random(11)
    accounts = [(i, f"Acct{i}", rnd.choice(["DE", "FR", "US"]),
                 f"{rnd.choice([2022, 2023])}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}")
                for i in range(1, 301)]
    invoices, refunds = [], []
    for n in range(1, 4001):
        invoices.append((n, rnd.randint(1, 300),
                         f"{rnd.choice([2022, 2023, 2024])}-{rnd.choice([1, 2, 3, 5, 8, 9, 12]):02d}-15",
                         rnd.choice([900, 2900, 9900, 123457]), rnd.choice(["paid"] * 8 + ["void", "open"])))
        if rnd.random() < 0.2:
            refunds.append((len(refunds) + 1, n, f"2024-{rnd.randint(1, 12):02d}-01", rnd.choice([100, 900, 50000])))
    db = make_db(tmp_path / "big.db", accounts, invoices, refunds)
    out = tmp_path / "o"
    res = run(db, str(out))
    assert res.returncode == 0, res.stderr
    expected = reference(rows_of(db))
    for name in FILES:
        assert (out / name).read_text() == expected[name], name
