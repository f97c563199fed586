#!/usr/bin/env bash
set -euo pipefail
cat > /app/dedupe <<'PY'
#!/usr/bin/env python3
"""Merge duplicate contacts by normalized email."""
import os
import sqlite3
import sys

GMAIL = {"gmail.com", "googlemail.com"}
FILL = ("full_name", "phone", "city")


def blank(value):
    return value is None or str(value).strip() == ""


def normalize(email):
    if email is None:
        return None
    e = email.strip().lower()
    if e.count("@") != 1:
        return None
    local, domain = e.split("@")
    if not local or not domain:
        return None
    if domain in GMAIL:
        local = local.split("+", 1)[0].replace(".", "")
        domain = "gmail.com"
        if not local:
            return None
    return f"{local}@{domain}"


def plan(con):
    rows = con.execute(
        "SELECT id, full_name, email, phone, city, updated_at FROM contacts").fetchall()
    groups = {}
    for row in rows:
        key = normalize(row[2])
        if key:
            groups.setdefault(key, []).append(row)
    merges = []
    for key, members in groups.items():
        if len(members) < 2:
            continue
        ordered = sorted(members, key=lambda r: r[0])
        ordered.sort(key=lambda r: r[5], reverse=True)
        merges.append((key, ordered[0], ordered[1:]))
    return rows, merges


def apply(con, rows, merges):
    con.execute("CREATE TABLE IF NOT EXISTS merge_log(loser_id INTEGER PRIMARY KEY, "
                "survivor_id INTEGER NOT NULL, email TEXT NOT NULL)")
    for key, survivor, losers in merges:
        sid = survivor[0]
        current = dict(zip(("id",) + ("full_name", "email", "phone", "city"), survivor[:5]))
        for col in FILL:
            if blank(current[col]):
                for loser in losers:
                    value = dict(zip(("id", "full_name", "email", "phone", "city"), loser[:5]))[col]
                    if not blank(value):
                        con.execute(f"UPDATE contacts SET {col} = ? WHERE id = ?", (value, sid))
                        break
        for loser in losers:
            con.execute("UPDATE tickets SET contact_id = ? WHERE contact_id = ?", (sid, loser[0]))
            con.execute("DELETE FROM contacts WHERE id = ?", (loser[0],))
            con.execute("INSERT INTO merge_log VALUES (?,?,?)", (loser[0], sid, key))
    for cid, email in con.execute("SELECT id, email FROM contacts").fetchall():
        if email is not None and email.strip() == "":
            con.execute("UPDATE contacts SET email = NULL WHERE id = ?", (cid,))
        else:
            norm = normalize(email)
            if norm is not None and norm != email:
                con.execute("UPDATE contacts SET email = ? WHERE id = ?", (norm, cid))


def main(argv):
    args = argv[1:]
    dry = "--dry-run" in args
    args = [a for a in args if a != "--dry-run"]
    if len(args) != 1 or len(argv) - 1 != len(args) + int(dry) or any(a.startswith("-") for a in args):
        print("usage: dedupe DB_PATH [--dry-run]", file=sys.stderr)
        return 2
    path = args[0]
    if not os.path.isfile(path):
        print(f"dedupe: no such database: {path}", file=sys.stderr)
        return 2
    uri = f"file:{path}?mode=ro" if dry else f"file:{path}"
    con = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        con.execute("BEGIN" if dry else "BEGIN IMMEDIATE")
        rows, merges = plan(con)
        if not dry:
            apply(con, rows, merges)
            con.execute("COMMIT")
        else:
            con.execute("ROLLBACK")
    except sqlite3.Error as exc:
        if con.in_transaction:
            con.execute("ROLLBACK")
        print(f"dedupe: {exc}", file=sys.stderr)
        return 1
    finally:
        con.close()
    removed = sum(len(losers) for _, _, losers in merges)
    print(f"groups={len(merges)} removed={removed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
PY
chmod +x /app/dedupe
/app/dedupe /app/data/crm.db
