import datetime
import hashlib
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/migrate"
LIBRARY_DB = "/app/data/library.db"
V1_SQL = Path(__file__).with_name("library_v1.sql").read_text()
V1_SCHEMA = """
CREATE TABLE books(id INTEGER PRIMARY KEY, title TEXT NOT NULL, authors TEXT, published TEXT,
                   price TEXT, isbn TEXT);
CREATE TABLE loans(id INTEGER PRIMARY KEY, book_id INTEGER, member TEXT NOT NULL,
                   loaned_on TEXT NOT NULL, returned_on TEXT);
PRAGMA user_version=1;
"""


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def make_v1(path, books, loans=()):
    con = sqlite3.connect(path)
    con.executescript(V1_SCHEMA)
    con.executemany("INSERT INTO books VALUES (?,?,?,?,?,?)", books)
    con.executemany("INSERT INTO loans VALUES (?,?,?,?,?)", loans)
    con.commit()
    con.close()
    return str(path)


def v1_rows(sql_text):
    con = sqlite3.connect(":memory:")
    con.executescript(sql_text)
    books = con.execute("SELECT * FROM books ORDER BY id").fetchall()
    loans = con.execute("SELECT * FROM loans ORDER BY id").fetchall()
    con.close()
    return books, loans


def ref_date(v):
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", (v or "").strip())
    if not m:
        return None
    try:
        return datetime.date(int(m[3]), int(m[1]), int(m[2])).isoformat()
    except ValueError:
        return None


def ref_price(v):
    s = (v or "").strip()
    m = re.fullmatch(r"\$?(\d+|\d{1,3}(?:,\d{3})+)(?:\.(\d{1,2}))?", s)
    if not m:
        return None
    return int(m[1].replace(",", "")) * 100 + int((m[2] or "0").ljust(2, "0"))


def ref_isbn(v):
    s = (v or "").replace("-", "").replace(" ", "")
    if not s:
        return None
    return s[:-1] + "X" if s[-1] == "x" else s


def reference(books, loans):
    out_books, authors, links = [], {}, []
    for bid, title, names, pub, price, isbn in books:
        out_books.append((bid, title, ref_date(pub), ref_price(price), ref_isbn(isbn)))
        seen = []
        for piece in (names or "").split(";"):
            name = " ".join(piece.split())
            if name and name not in seen:
                seen.append(name)
        for pos, name in enumerate(seen, 1):
            authors.setdefault(name, len(authors) + 1)
            links.append((bid, authors[name], pos))
    ids = {b[0] for b in books}
    return {
        "books": out_books,
        "authors": [(i, n) for n, i in authors.items()],
        "book_authors": sorted(links),
        "loans": [l for l in loans if l[1] in ids],
        "orphan_loans": [l for l in loans if l[1] not in ids],
    }


def actual(path):
    con = sqlite3.connect(path)
    got = {
        "books": con.execute("SELECT id, title, published, price_cents, isbn FROM books ORDER BY id").fetchall(),
        "authors": con.execute("SELECT id, name FROM authors ORDER BY id").fetchall(),
        "book_authors": con.execute(
            "SELECT book_id, author_id, position FROM book_authors ORDER BY 1, 2").fetchall(),
        "loans": con.execute("SELECT * FROM loans ORDER BY id").fetchall(),
        "orphan_loans": con.execute("SELECT * FROM orphan_loans ORDER BY id").fetchall(),
    }
    con.close()
    return got


def dump(path):
    con = sqlite3.connect(path)
    text = "\n".join(con.iterdump())
    version = con.execute("PRAGMA user_version").fetchone()[0]
    con.close()
    return version, text


def sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture
def tricky(tmp_path):
    books = [
        (1, "Alpha", "  Le  Guin,   Ursula ;Smith, J.;; Le Guin, Ursula ;", "7/4/1999", " $1,299.00 ", "978-0-306-40615-7"),
        (2, "Beta", "Smith, J.", "02/29/2024", "12.5", "0 306 40615 x"),
        (3, "Gamma", None, "02/29/2023", "free", ""),
        (5, "Delta", "   ", "", "7", None),
        (8, "Epsilon", "Ñúñez, Zoë; Smith, J.", "12/31/1900", "$0.05", "978-1-234-56789-7 "),
        (9, "Zeta", "smith, j.", "1/1/2000 ", "1,23", "12-34"),
        (10, "Eta", "A;B;C;D", "2000-01-01", "$.50", "  "),
    ]
    loans = [
        (1, 1, "ann", "2024-01-01", None), (2, 4, "bob", "2024-01-02", "2024-01-09"),
        (3, None, "cy", "2024-01-03", None), (4, 10, "dee", "2024-01-04", "2024-02-01"),
    ]
    return make_v1(tmp_path / "t.db", books, loans), books, loans


def test_migrate_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_library_db_is_version_2():
    con = sqlite3.connect(LIBRARY_DB)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2
    con.close()


def test_library_db_data_matches_reference():
    books, loans = v1_rows(V1_SQL)
    assert actual(LIBRARY_DB) == reference(books, loans)


def test_schema_objects_exact(tricky):
    path, _, _ = tricky
    assert run(path).returncode == 0
    con = sqlite3.connect(path)
    objs = sorted(con.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall())
    assert objs == [("index", "loans_book_id"), ("table", "authors"), ("table", "book_authors"),
                    ("table", "books"), ("table", "loans"), ("table", "orphan_loans")]
    cols = [(r[1], r[2].upper(), r[3], r[5]) for r in con.execute("PRAGMA table_info(books)")]
    assert cols == [("id", "INTEGER", 0, 1), ("title", "TEXT", 1, 0), ("published", "TEXT", 0, 0),
                    ("price_cents", "INTEGER", 0, 0), ("isbn", "TEXT", 0, 0)]
    idx = [r[2] for r in con.execute("PRAGMA index_info(loans_book_id)")]
    assert idx == ["book_id"]


def test_constraints_and_foreign_keys(tricky):
    path, _, _ = tricky
    run(path)
    con = sqlite3.connect(path)
    fks = {(r[2], r[3], r[4]) for r in con.execute("PRAGMA foreign_key_list(book_authors)")}
    assert fks == {("books", "book_id", "id"), ("authors", "author_id", "id")}
    assert {(r[2], r[3], r[4]) for r in con.execute("PRAGMA foreign_key_list(loans)")} == {
        ("books", "book_id", "id")}
    pk = sorted((r[5], r[1]) for r in con.execute("PRAGMA table_info(book_authors)") if r[5])
    assert pk == [(1, "book_id"), (2, "author_id")]
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO authors(name) VALUES ('Smith, J.')")
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO books(id, title, isbn) VALUES (100, 'x', '9780306406157')")


def test_dates_converted(tricky):
    path, _, _ = tricky
    run(path)
    got = dict((r[0], r[2]) for r in actual(path)["books"])
    assert got == {1: "1999-07-04", 2: "2024-02-29", 3: None, 5: None, 8: "1900-12-31",
                   9: "2000-01-01", 10: None}


def test_prices_converted(tricky):
    path, _, _ = tricky
    run(path)
    got = dict((r[0], r[3]) for r in actual(path)["books"])
    assert got == {1: 129900, 2: 1250, 3: None, 5: 700, 8: 5, 9: None, 10: None}


def test_isbn_normalized(tmp_path):
    path = make_v1(tmp_path / "i.db", [
        (1, "a", None, None, None, "978-0-306-40615-7"), (2, "b", None, None, None, "0 306 40615 x"),
        (3, "c", None, None, None, "   "), (4, "d", None, None, None, None)])
    assert run(path).returncode == 0
    got = dict((r[0], r[4]) for r in actual(path)["books"])
    assert got == {1: "9780306406157", 2: "030640615X", 3: None, 4: None}


def test_authors_normalized_and_ordered(tricky):
    path, books, loans = tricky
    run(path)
    got = actual(path)
    assert got["authors"] == [(1, "Le Guin, Ursula"), (2, "Smith, J."), (3, "Ñúñez, Zoë"),
                              (4, "smith, j."), (5, "A"), (6, "B"), (7, "C"), (8, "D")]
    assert [r for r in got["book_authors"] if r[0] == 1] == [(1, 1, 1), (1, 2, 2)]
    assert [r for r in got["book_authors"] if r[0] == 8] == [(8, 2, 2), (8, 3, 1)]


def test_orphan_loans_split(tricky):
    path, _, loans = tricky
    run(path)
    got = actual(path)
    assert got["loans"] == [loans[0], loans[3]]
    assert got["orphan_loans"] == [loans[1], loans[2]]


def test_full_reference_on_hidden_db(tricky):
    path, books, loans = tricky
    res = run(path)
    assert res.returncode == 0, res.stderr
    assert actual(path) == reference(books, loans)


def test_duplicate_isbn_fails_atomically(tmp_path):
    books = [(1, "a", "X; Y", "1/2/2003", "$3", "978-0-306-40615-7"),
             (2, "b", "Z", "1/2/2003", "$3", "111"),
             (7, "c", "Q", None, None, "9780306406157")]
    path = make_v1(tmp_path / "d.db", books, [(1, 2, "m", "2024-01-01", None)])
    before = dump(path)
    res = run(path)
    assert res.returncode == 1
    assert "1" in res.stderr and "7" in res.stderr
    assert dump(path) == before
    assert dump(path)[0] == 1


def test_already_v2_is_noop(tricky):
    path, _, _ = tricky
    assert run(path).returncode == 0
    digest = sha(path)
    res = run(path)
    assert res.returncode == 0
    assert res.stdout.strip() == "already at version 2"
    assert sha(path) == digest


def test_unknown_version_exit_2(tmp_path):
    path = make_v1(tmp_path / "v.db", [(1, "a", None, None, None, None)])
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version=7")
    con.commit()
    con.close()
    digest = sha(path)
    res = run(path)
    assert res.returncode == 2
    assert res.stderr.strip()
    assert sha(path) == digest


def test_missing_file_exit_2_nothing_created(tmp_path):
    target = tmp_path / "missing.db"
    res = run(str(target))
    assert res.returncode == 2
    assert res.stderr.strip()
    assert not target.exists()


def test_wrong_argument_count_exit_2():
    assert run().returncode == 2
    assert run(LIBRARY_DB, LIBRARY_DB).returncode == 2


def test_empty_v1_database(tmp_path):
    path = make_v1(tmp_path / "e.db", [])
    assert run(path).returncode == 0
    got = actual(path)
    assert all(v == [] for v in got.values())
    assert dump(path)[0] == 2


def test_large_generated_database(tmp_path):
    import random
    rnd = random.Random(5)
    names = ["Doe, Jane", " Roe,  Richard", "Poe, E. A.", "Ng, Li", "Ng,Li"]
    books = []
    for i in range(1, 1501):
        a = ";".join(rnd.choice(names) for _ in range(rnd.randint(0, 4)))
        books.append((i * 2, f"T{i}", a, f"{rnd.randint(1, 13)}/{rnd.randint(1, 31)}/{rnd.randint(1900, 2030)}",
                      rnd.choice(["$5", "5.25", "1,000", "10,00", None, "abc", "$1,234,567.8"]),
                      f"97{i:011d}" if i % 3 else None))
    loans = [(i, rnd.randint(1, 3100), "m", "2024-03-01", None) for i in range(1, 2001)]
    path = make_v1(tmp_path / "big.db", books, loans)
    res = run(path)
    assert res.returncode == 0, res.stderr
    assert actual(path) == reference(books, loans)
