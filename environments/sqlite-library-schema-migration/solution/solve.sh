#!/usr/bin/env bash
set -euo pipefail
cat > /app/migrate <<'PY'
#!/usr/bin/env python3
"""Migrate a library database from schema version 1 to 2, in one transaction."""
import datetime
import os
import re
import sqlite3
import sys

V2_SCHEMA = """
CREATE TABLE books_v2(
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  published TEXT,
  price_cents INTEGER,
  isbn TEXT UNIQUE
);
CREATE TABLE authors(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE book_authors(
  book_id INTEGER NOT NULL REFERENCES books(id),
  author_id INTEGER NOT NULL REFERENCES authors(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (book_id, author_id)
);
CREATE TABLE loans_v2(
  id INTEGER PRIMARY KEY,
  book_id INTEGER NOT NULL REFERENCES books(id),
  member TEXT NOT NULL,
  loaned_on TEXT NOT NULL,
  returned_on TEXT
);
CREATE TABLE orphan_loans(
  id INTEGER PRIMARY KEY,
  book_id INTEGER,
  member TEXT NOT NULL,
  loaned_on TEXT NOT NULL,
  returned_on TEXT
);
"""
PRICE = re.compile(r"^\$?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$")
DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")


class MigrationError(Exception):
    pass


def parse_date(value):
    m = DATE.match((value or "").strip())
    if not m:
        return None
    try:
        return datetime.date(int(m[3]), int(m[1]), int(m[2])).isoformat()
    except ValueError:
        return None


def parse_price(value):
    m = PRICE.match((value or "").strip())
    if not m:
        return None
    frac = (m[2] or "").ljust(2, "0")
    return int(m[1].replace(",", "")) * 100 + int(frac or 0)


def parse_isbn(value):
    s = re.sub(r"[- ]", "", value or "")
    if not s:
        return None
    return s[:-1] + "X" if s.endswith("x") else s


def split_authors(value):
    names = []
    for piece in (value or "").split(";"):
        name = " ".join(piece.split())
        if name and name not in names:
            names.append(name)
    return names


def migrate(con):
    con.execute("BEGIN IMMEDIATE")
    for stmt in V2_SCHEMA.split(";"):
        if stmt.strip():
            con.execute(stmt)
    author_ids = {}
    isbn_owner = {}
    books = con.execute("SELECT id, title, authors, published, price, isbn FROM books ORDER BY id").fetchall()
    for bid, title, authors, published, price, isbn in books:
        norm = parse_isbn(isbn)
        if norm is not None:
            if norm in isbn_owner:
                raise MigrationError(f"duplicate ISBN {norm}: books {isbn_owner[norm]} and {bid}")
            isbn_owner[norm] = bid
        con.execute("INSERT INTO books_v2 VALUES (?,?,?,?,?)",
                    (bid, title, parse_date(published), parse_price(price), norm))
        for pos, name in enumerate(split_authors(authors), start=1):
            if name not in author_ids:
                author_ids[name] = len(author_ids) + 1
                con.execute("INSERT INTO authors VALUES (?,?)", (author_ids[name], name))
            con.execute("INSERT INTO book_authors VALUES (?,?,?)", (bid, author_ids[name], pos))
    known = {b[0] for b in books}
    for row in con.execute("SELECT id, book_id, member, loaned_on, returned_on FROM loans ORDER BY id").fetchall():
        table = "loans_v2" if row[1] in known else "orphan_loans"
        con.execute(f"INSERT INTO {table} VALUES (?,?,?,?,?)", row)
    con.execute("DROP TABLE loans")
    con.execute("DROP TABLE books")
    con.execute("ALTER TABLE books_v2 RENAME TO books")
    con.execute("ALTER TABLE loans_v2 RENAME TO loans")
    con.execute("CREATE INDEX loans_book_id ON loans(book_id)")
    con.execute("PRAGMA user_version = 2")
    if con.execute("PRAGMA foreign_key_check").fetchall():
        raise MigrationError("foreign key check failed after migration")
    con.execute("COMMIT")


def main(argv):
    if len(argv) != 2:
        print("usage: migrate DB_PATH", file=sys.stderr)
        return 2
    path = argv[1]
    if not os.path.isfile(path):
        print(f"migrate: no such database: {path}", file=sys.stderr)
        return 2
    con = sqlite3.connect(path, isolation_level=None)
    try:
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version == 2:
            print("already at version 2")
            return 0
        if version != 1:
            print(f"migrate: unsupported schema version {version}", file=sys.stderr)
            return 2
        con.execute("PRAGMA legacy_alter_table = ON")
        try:
            migrate(con)
        except (MigrationError, sqlite3.Error) as exc:
            if con.in_transaction:
                con.execute("ROLLBACK")
            print(f"migrate: {exc}; database left unchanged", file=sys.stderr)
            return 1
        con.execute("VACUUM")
        return 0
    finally:
        con.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/migrate
/app/migrate /app/data/library.db
